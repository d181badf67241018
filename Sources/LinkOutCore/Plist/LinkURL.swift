/// A plist link URL taken apart just enough to check it: `scheme://authority/path?query#fragment`.
///
/// Not a general URL parser: plist link URLs are absolute and, when right, plain ASCII, and the gateway
/// matches the path byte for byte, so the parts are split on their delimiters and nothing is decoded.
struct LinkURL: Equatable {
    var scheme: Substring
    var authority: Substring
    /// As written; empty when the URL ends after the authority (a browser then asks for `/`).
    var path: Substring
    var query: Substring?
    var fragment: Substring?

    /// Nil unless the text starts with `scheme://` and names an authority.
    init?(_ text: String) {
        guard let separator = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound]
        guard let first = scheme.utf8.first, Self.isLetter(first),
              scheme.utf8.allSatisfy({ Self.isLetter($0) || Self.isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else { return nil }
        var rest = text[separator.upperBound...]
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        authority = rest[..<slash]
        guard !authority.isEmpty else { return nil }
        path = rest[slash...]
        self.scheme = scheme
    }

    /// The path a request for this URL carries.
    var requestPath: String { path.isEmpty ? "/" : String(path) }

    /// `https://host[:port]`, lowercased: what "the same host" means when comparing links.
    var origin: String { "\(scheme)://\(authority)".lowercased() }

    /// A plain host name, IPv4 or bracketed IPv6 address, and an optional port; no user information:
    /// the rule destinations are held to.
    var hasValidHost: Bool { DestinationURLRules.isHostAndPort(authority) }

    /// Printable ASCII, no space: what a URL may hold without percent-encoding.
    static func isPrintableASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
