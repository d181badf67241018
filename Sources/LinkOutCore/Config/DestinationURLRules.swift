/// What a destination URL may be: absolute https, a plain host, printable ASCII only. These bytes go
/// into the Location header as they are, so anything that could bend a header or a parser is refused.
public enum DestinationURLRules {
    public static func problem(with url: String) -> String? {
        guard url.hasPrefix("https://") else { return "must be an absolute https:// URL" }
        guard url.utf8.count <= 2000 else { return "must be at most 2000 bytes" }
        for byte in url.utf8 where byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\\") {
            return "must be printable ASCII without spaces or backslashes (percent-encode anything else)"
        }
        guard let parts = URLAuthority(url) else { return "must be an absolute https:// URL" }
        if parts.authority.isEmpty { return "must name a host" }
        if parts.userInfo != nil { return "must not carry user information ('@')" }
        if !parts.hasValidHostAndPort { return "must have a valid host name (and optional :port)" }
        if url.utf8.contains(UInt8(ascii: "#")),
            url.utf8.split(separator: UInt8(ascii: "#"), omittingEmptySubsequences: false).count > 2
        {
            return "must not contain more than one '#'"
        }
        return nil
    }
}
