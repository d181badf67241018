/// One thing the health checker asks: a URL and a method. Destinations that share a target (several
/// destinations on one origin, or the same health URL) share one check and one state.
public struct HealthTarget: Hashable, Sendable {
    /// An absolute `http://` or `https://` URL.
    public var url: String
    public var method: Method

    /// GET for a health URL the config names (its body is read and discarded); HEAD for a destination's
    /// origin, where only reachability and the status matter.
    public enum Method: String, Sendable {
        case get = "GET"
        case head = "HEAD"
    }

    public init(url: String, method: Method) {
        self.url = url
        self.method = method
    }

    /// For a destination without its own health URL: HEAD on `scheme://host[:port]/` of its URL.
    ///
    /// The path, query and fragment are dropped (a checkout path may need parameters a check cannot give),
    /// so is any userinfo (credentials never go out in a check, nor into logs). Scheme and host are
    /// lowercased and a default port (80 for http, 443 for https) is dropped, so every destination on one
    /// origin maps to the same target. Nil for anything but an absolute http(s) URL with a host.
    public static func origin(of destinationURL: String) -> HealthTarget? {
        guard let parts = URLAuthority(destinationURL) else { return nil }
        let scheme = parts.scheme.lowercased()
        let defaultPort: Int
        switch scheme {
        case "http": defaultPort = 80
        case "https": defaultPort = 443
        default: return nil
        }
        // Userinfo is dropped: credentials never go out in a check, nor into logs.
        let host = parts.host
        guard host.hasPrefix("[") ? host.count > 2 && host.hasSuffix("]") : (!host.isEmpty && !host.contains(":")) else { return nil }
        // Nothing that could split a request line or a header.
        guard host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) else { return nil }
        if parts.port?.isEmpty == false, parts.portNumber == nil { return nil }
        let portText = parts.portNumber.map(String.init) ?? ""

        var url = scheme + "://" + host.lowercased()
        if !portText.isEmpty, portText != String(defaultPort) { url += ":" + portText }
        url += "/"
        return HealthTarget(url: url, method: .head)
    }
}
