/// The head of an absolute URL, `scheme://[userinfo@]host[:port]`, taken apart one way for every reader:
/// a destination's rules (no userinfo, a valid host), a plist link's, a health check's origin (userinfo
/// dropped, the port normalised) and a store URL's redaction (the password hidden). Nothing is decoded:
/// the parts are the bytes as written, split on their delimiters.
public struct URLAuthority: Equatable, Sendable {
    public var scheme: Substring
    /// `userinfo@host:port` as written; empty when the URL names none.
    public var authority: Substring
    /// Up to the last '@' of the authority, when it has one.
    public var userInfo: Substring?
    /// A name, an IPv4 address, or an IPv6 one with its brackets.
    public var host: Substring
    /// The port's text as written, when there is a ':' after the host.
    public var port: Substring?
    /// The path, query and fragment.
    public var rest: Substring

    /// - Parameter userInfoAcrossDelimiters: the userinfo runs to the last '@' before the query, even past a
    ///   '/' or ':' (libpq takes a password with an unescaped '/'), so that a redaction misses none of it;
    ///   otherwise the authority ends at the first '/', '?' or '#', as RFC 3986 says.
    public init?(_ url: Substring, userInfoAcrossDelimiters: Bool = false) {
        guard let separator = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<separator.lowerBound]
        guard let first = scheme.utf8.first, Self.isLetter(first),
            scheme.utf8.allSatisfy({
                Self.isLetter($0) || Self.isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            })
        else { return nil }
        let after = url[separator.upperBound...]
        let ends: (Character) -> Bool = { $0 == "/" || $0 == "?" || $0 == "#" }
        var end = after.firstIndex(where: ends) ?? after.endIndex
        if userInfoAcrossDelimiters {
            let beforeQuery = after[..<(after.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? after.endIndex)]
            if let at = beforeQuery.lastIndex(of: "@") { end = after[at...].firstIndex(where: ends) ?? after.endIndex }
        }
        self.scheme = scheme
        authority = after[..<end]
        rest = after[end...]
        var hostAndPort = authority
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[..<at]
            hostAndPort = authority[authority.index(after: at)...]
        }
        if hostAndPort.first == "[" {
            // An IPv6 literal keeps its brackets, and only ":port" may follow the closing one; anything else
            // is all host, which no rule takes (`hasValidHostAndPort`).
            if let close = hostAndPort.firstIndex(of: "]"), hostAndPort[hostAndPort.index(after: close)...].first.map({ $0 == ":" }) ?? true
            {
                host = hostAndPort[...close]
                let tail = hostAndPort[hostAndPort.index(after: close)...]
                if !tail.isEmpty { port = tail.dropFirst() }
            } else {
                host = hostAndPort
            }
        } else if let colon = hostAndPort.lastIndex(of: ":") {
            host = hostAndPort[..<colon]
            port = hostAndPort[hostAndPort.index(after: colon)...]
        } else {
            host = hostAndPort
        }
    }

    public init?(_ url: String, userInfoAcrossDelimiters: Bool = false) {
        self.init(url[...], userInfoAcrossDelimiters: userInfoAcrossDelimiters)
    }

    /// The port when it is 1 to 5 plain digits from 1 to 65535 (not `+443`, which `Int` would take but a
    /// browser refuses); nil when there is none or it is not one.
    public var portNumber: Int? {
        guard let port, (1...5).contains(port.utf8.count), port.utf8.allSatisfy(Self.isDigit), let number = Int(port),
            (1...65_535).contains(number)
        else { return nil }
        return number
    }

    /// A plain host name, IPv4 or bracketed IPv6 address, with a valid port if one is given: the rule
    /// destinations and plist links are held to.
    public var hasValidHostAndPort: Bool {
        if port != nil, portNumber == nil { return false }
        if host.hasPrefix("[") {
            return host.count > 2 && host.hasSuffix("]")
                && host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        guard !host.isEmpty, !host.hasPrefix("."), !host.hasPrefix("-"), !host.contains("..") else { return false }
        return host.utf8.allSatisfy { Self.isLetter($0) || Self.isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
