/// Which peers may tell linkout the client's address (`X-Forwarded-For`, `Forwarded: for=`), and how to
/// read it from them. A header from any other peer is ignored: anyone can send one.
public struct TrustedProxies: Sendable, Equatable {
    /// Address ranges, as CIDR text (`10.0.0.0/8`, `::1/128`).
    public let ranges: [String]
    private let v4: [(network: UInt32, mask: UInt32)]
    private let v6: [(network: [UInt8], bits: Int)]

    public static func == (lhs: TrustedProxies, rhs: TrustedProxies) -> Bool { lhs.ranges == rhs.ranges }

    /// nil when a range is not valid CIDR; the config loader names it.
    public init?(ranges: [String]) {
        var v4: [(UInt32, UInt32)] = []
        var v6: [([UInt8], Int)] = []
        for range in ranges {
            let parts = range.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return nil }
            let address = String(parts[0])
            if let ip = IPAddressText.parseIPv4(address) {
                let bits = parts.count == 2 ? Int(parts[1]) : 32
                guard let bits, (0...32).contains(bits) else { return nil }
                let mask = IPAddressText.ipv4Mask(bits: bits)
                v4.append((ip & mask, mask))
            } else if let ip = IPAddressText.parseIPv6(address) {
                let bits = parts.count == 2 ? Int(parts[1]) : 128
                guard let bits, (0...128).contains(bits) else { return nil }
                v6.append((IPAddressText.masked(ip, bits: bits), bits))
            } else {
                return nil
            }
        }
        self.ranges = ranges
        self.v4 = v4
        self.v6 = v6
    }

    public static let none = TrustedProxies(ranges: [])!

    public var isEmpty: Bool { ranges.isEmpty }

    public func contains(_ address: String) -> Bool {
        if let ip = IPAddressText.parseIPv4(address) {
            return v4.contains { ip & $0.mask == $0.network }
        }
        if let ip = IPAddressText.parseIPv6(address) {
            return v6.contains { IPAddressText.masked(ip, bits: $0.bits) == $0.network }
        }
        return false
    }

    /// The client behind a chain of proxies: from `X-Forwarded-For`'s list, the rightmost address that is
    /// not a trusted proxy (the leftmost entries are the client's own to write). nil when the peer is not
    /// trusted or the header holds nothing usable, and the peer's address is the client's.
    public func client(peer: String, forwardedFor: String?) -> String? {
        guard let forwardedFor, contains(peer) else { return nil }
        let hops = forwardedFor.split(separator: ",").map { Self.trimmed($0) }
        for hop in hops.reversed() {
            guard IPAddressText.parseIPv4(hop) != nil || IPAddressText.parseIPv6(hop) != nil else { return nil }
            if !contains(hop) { return hop }
        }
        return nil
    }

    /// The `for=` addresses of a `Forwarded` header (RFC 7239), as an `X-Forwarded-For`-style list.
    public static func forwardedFor(fromForwarded header: String) -> String {
        var addresses: [String] = []
        for element in header.split(separator: ",") {
            for pair in element.split(separator: ";") {
                let trimmed = Self.trimmed(pair)
                guard trimmed.lowercased().hasPrefix("for=") else { continue }
                var value = Substring(trimmed.dropFirst(4))
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
                if value.hasPrefix("[") {
                    // "[2001:db8::1]:4711" or "[2001:db8::1]"
                    if let close = value.firstIndex(of: "]") { value = value[value.index(after: value.startIndex)..<close] }
                } else if value.filter({ $0 == ":" }).count == 1, let colon = value.firstIndex(of: ":") {
                    value = value[..<colon]  // "192.0.2.43:47011"
                }
                addresses.append(String(value))
            }
        }
        return addresses.joined(separator: ",")
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
