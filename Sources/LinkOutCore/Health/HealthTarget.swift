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
        let bytes = Array(destinationURL.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
              bytes.count >= colon + 3,
              bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
        else { return nil }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        let defaultPort: String
        switch scheme {
        case "http": defaultPort = "80"
        case "https": defaultPort = "443"
        default: return nil
        }

        // The authority runs to the first '/', '?' or '#'.
        let start = colon + 3
        var end = start
        while end < bytes.count, ![UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")].contains(bytes[end]) {
            end += 1
        }
        var authority = bytes[start..<end]
        // Userinfo ends at the last '@' (a password may hold an escaped one, never a raw one, but be safe).
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            authority = authority[(at + 1)...]
        }

        var host: ArraySlice<UInt8>
        var port: ArraySlice<UInt8> = []
        if authority.first == UInt8(ascii: "[") {
            // An IPv6 literal: [address] then an optional :port.
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = authority[authority.startIndex...close]
            let rest = authority[(close + 1)...]
            if let first = rest.first {
                guard first == UInt8(ascii: ":") else { return nil }
                port = rest.dropFirst()
            }
            guard host.count > 2 else { return nil }
        } else {
            if let portColon = authority.lastIndex(of: UInt8(ascii: ":")) {
                host = authority[..<portColon]
                port = authority[(portColon + 1)...]
            } else {
                host = authority
            }
            guard !host.isEmpty, !host.contains(UInt8(ascii: ":")) else { return nil }
        }
        // Nothing that could split a request line or a header.
        guard host.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) else { return nil }

        var portText = ""
        if !port.isEmpty {
            guard port.count <= 5, port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let number = Int(String(decoding: port, as: UTF8.self)), (1...65_535).contains(number)
            else { return nil }
            portText = String(number)
        }

        var url = scheme + "://" + String(decoding: host, as: UTF8.self).lowercased()
        if !portText.isEmpty, portText != defaultPort { url += ":" + portText }
        url += "/"
        return HealthTarget(url: url, method: .head)
    }
}
