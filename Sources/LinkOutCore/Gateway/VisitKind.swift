/// Who a link-out visit is from, as far as the request tells. Every kind is answered the same way and
/// its token recorded (every token is reported to Apple), but only a shopper's visit counts as a hit.
public enum VisitKind: String, Sendable, Equatable, CaseIterable {
    case shopper
    /// `Purpose: prefetch` or `Sec-Purpose: prefetch…`: a browser loading ahead of a tap.
    case prefetch
    /// HEAD: link checkers and previews.
    case head
    /// A known crawler, link-preview fetcher or scanner, by its User-Agent.
    case bot
}

/// Recognises prefetches and bots from request headers.
///
/// A User-Agent is matched case-insensitively against substrings: the built-in list covers search and
/// social crawlers, messaging link previews, HTTP libraries and security scanners; a config can add its
/// own. A real shopper arrives from StoreKit in Safari or the app's web view, whose User-Agent matches
/// none of these. A missing User-Agent is not taken as a bot: counting a shopper out would lose a hit.
public struct BotRules: Sendable, Equatable {
    public static let builtIn: [String] = [
        "bot", "crawler", "spider", "slurp", "facebookexternalhit", "facebookcatalog", "whatsapp",
        "skypeuripreview", "embedly", "quora link preview", "outbrain", "pinterest", "vkshare", "w3c_validator",
        "headlesschrome", "phantomjs", "lighthouse", "curl/", "wget/", "python-requests", "python-urllib",
        "aiohttp", "go-http-client", "okhttp", "java/", "libwww-perl", "httpclient", "node-fetch", "axios/",
        "scrapy", "nmap", "masscan", "zgrab", "nuclei", "sqlmap", "nikto", "censys", "shodan", "expanse",
        "httpx", "l9scan", "wpscan", "dirbuster", "gobuster",
    ]

    /// Lowercased substrings.
    public let patterns: [[UInt8]]

    public init(extra: [String] = []) {
        patterns = (Self.builtIn + extra.map { $0.lowercased() }).map { Array($0.utf8) }
    }

    public static let defaults = BotRules()

    public func kind(method: RequestMethod, purpose: String?, secPurpose: String?, userAgent: String?) -> VisitKind {
        if method == .head { return .head }
        if let purpose, Self.containsPrefetch(purpose) { return .prefetch }
        if let secPurpose, Self.containsPrefetch(secPurpose) { return .prefetch }
        if let userAgent, isBot(userAgent) { return .bot }
        return .shopper
    }

    private static func containsPrefetch(_ value: String) -> Bool {
        lowercased(value).firstRange(of: Array("prefetch".utf8)) != nil
    }

    public func isBot(_ userAgent: String) -> Bool {
        let agent = Self.lowercased(userAgent)
        return patterns.contains { agent.firstRange(of: $0) != nil }
    }

    private static func lowercased(_ text: String) -> [UInt8] {
        text.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }
    }
}
