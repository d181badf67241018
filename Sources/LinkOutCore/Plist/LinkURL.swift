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
    private var parts: URLAuthority

    /// Nil unless the text starts with `scheme://` and names an authority.
    init?(_ text: String) {
        guard let parts = URLAuthority(text), !parts.authority.isEmpty else { return nil }
        var rest = parts.rest
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        scheme = parts.scheme
        authority = parts.authority
        path = rest
        self.parts = parts
    }

    /// The path a request for this URL carries.
    var requestPath: String { path.isEmpty ? "/" : String(path) }

    /// `https://host[:port]`, lowercased: what "the same host" means when comparing links.
    var origin: String { "\(scheme)://\(authority)".lowercased() }

    /// A plain host name, IPv4 or bracketed IPv6 address, and an optional port; no user information:
    /// the rule destinations are held to.
    var hasValidHost: Bool { parts.userInfo == nil && parts.hasValidHostAndPort }

    /// Printable ASCII, no space: what a URL may hold without percent-encoding.
    static func isPrintableASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
