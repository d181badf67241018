/// What a destination URL may be: absolute https, a plain host, printable ASCII only. These bytes go
/// into the Location header as they are, so anything that could bend a header or a parser is refused.
public enum DestinationURLRules {
    public static func problem(with url: String) -> String? {
        guard url.hasPrefix("https://") else { return "must be an absolute https:// URL" }
        guard url.utf8.count <= 2000 else { return "must be at most 2000 bytes" }
        for byte in url.utf8 where byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\\") {
            return "must be printable ASCII without spaces or backslashes (percent-encode anything else)"
        }
        let rest = url.utf8.dropFirst(8)
        let authorityEnd = rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        if authority.isEmpty { return "must name a host" }
        if authority.contains(UInt8(ascii: "@")) { return "must not carry user information ('@')" }
        if !isHostAndPort(Substring(authority)) { return "must have a valid host name (and optional :port)" }
        if url.utf8.contains(UInt8(ascii: "#")),
           url.utf8.split(separator: UInt8(ascii: "#"), omittingEmptySubsequences: false).count > 2 {
            return "must not contain more than one '#'"
        }
        return nil
    }

    /// A plain host name, IPv4 or bracketed IPv6 address, and an optional port of plain digits; no user
    /// information. Also the plist linter's rule for link URLs' hosts.
    static func isHostAndPort(_ authority: Substring) -> Bool {
        var host = authority
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            let port = authority[authority.index(after: colon)...]
            // Digits only: Int("+443") parses, but a browser would refuse that Location.
            guard (1...5).contains(port.count), port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber),
                  let number = Int(port), (1...65535).contains(number) else { return false }
            host = authority[..<colon]
        }
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { return false }
            return host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        guard !host.isEmpty, !host.hasPrefix("."), !host.hasPrefix("-"), !host.contains("..") else { return false }
        return host.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."): true
            default: false
            }
        }
    }
}
