/// Where a shared link learns the shopper's country, in order: a trusted load balancer's header, the
/// GeoIP database, the link's default. Only the first two can be wrong; the default is always allowed.
public enum CountrySource {
    /// Codes load balancers and GeoIP databases use for "not a country": Cloudflare's `XX` (unknown) and
    /// `T1` (Tor), `ZZ`, MaxMind's legacy `A1` `A2` `O1`, and the continent codes `EU` and `AP`.
    public static let pseudoCodes: Set<String> = ["xx", "t1", "zz", "a1", "a2", "o1", "eu", "ap"]

    /// A header or database value as a country code: trimmed, lowercased, two letters, ISO 3166-1, not a
    /// pseudo-code. nil otherwise.
    public static func normalized(_ value: String) -> String? {
        var bytes = Array(value.utf8)
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        guard bytes.count == 2 else { return nil }
        let code = String(decoding: bytes.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        guard !pseudoCodes.contains(code), CountryCodes.iso3166Alpha2.contains(code) else { return nil }
        return code
    }

    /// The shopper's country as far as the request tells, or nil when unknown. The header counts only from
    /// a trusted proxy (anyone can send it); a known country from the header wins over the database.
    public static func detect(proxies: ProxySettings, context: some RequestContext) -> String? {
        if let header = proxies.countryHeader, !proxies.trusted.isEmpty, let value = context.header(header),
            proxies.trusted.contains(context.peerAddress()), let code = normalized(value)
        {
            return code
        }
        return context.geoCountry().flatMap(normalized)
    }
}
