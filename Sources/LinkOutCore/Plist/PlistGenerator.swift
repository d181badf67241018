/// Writes the Info.plist keys for a config: each link's URL is the gateway's public base URL followed by
/// the link's path, under the link's country. A country with one link goes under `SKExternalPurchaseLink`
/// (every iOS version reads it); a country with several goes under `SKExternalPurchaseMultiLink`.
///
/// The gateway does not know its public host, so the base URL comes from the caller. It may not carry a
/// path: linkout matches the request path exactly, so a prefix that a proxy strips would make the plist
/// disagree with the config that `plist lint` checks it against.
public enum PlistGenerator {
    /// A base URL that cannot be used, and why.
    public struct BaseURLError: Error, Sendable, Equatable, CustomStringConvertible {
        public var baseURL: String
        public var rule: String

        public var description: String { "base URL '\(baseURL)' \(rule)" }
    }

    /// `https://host[:port]` without a trailing `/`, or why the text is not a usable base URL.
    public static func normalizedBaseURL(_ text: String) -> Result<String, BaseURLError> {
        func fail(_ rule: String) -> Result<String, BaseURLError> { .failure(BaseURLError(baseURL: text, rule: rule)) }
        guard LinkURL.isPrintableASCII(text) else { return fail("must be printable ASCII without spaces") }
        guard let parts = LinkURL(text) else {
            return fail("must be an absolute https:// URL with a host, such as https://pay.example.com")
        }
        guard parts.scheme == "https" else { return fail("must start with https:// (Apple accepts only HTTPS link URLs)") }
        guard parts.query == nil else { return fail("must not have a query: plist link URLs cannot carry one") }
        guard parts.fragment == nil else { return fail("must not have a fragment ('#')") }
        guard parts.hasValidHost else { return fail("must name a plain host (and optional :port), without user information") }
        guard parts.path.isEmpty || parts.path == "/" else {
            return fail(
                "must not have a path ('\(parts.path)'): each link's URL is the base URL followed by the link's configured path, which linkout matches exactly"
            )
        }
        return .success("https://\(parts.authority)")
    }

    /// The keys as values: countries with one link under `single`, with several under `multi`.
    public static func links(for config: GatewayConfig, baseURL: String) -> Result<ExternalPurchaseLinks, BaseURLError> {
        normalizedBaseURL(baseURL).map { base in
            var byCountry: [String: [String]] = [:]
            // A shared link is listed under each country it serves. A link that expects no token is not
            // StoreKit's (the app opens it itself), so it has no place in these keys.
            for link in config.links where link.token == .required {
                for country in link.servedCountries { byCountry[country, default: []].append(base + link.path) }
            }
            let single = byCountry.filter { $0.value.count == 1 }.mapValues { $0[0] }
            let multi = byCountry.filter { $0.value.count > 1 }
            return ExternalPurchaseLinks(links: single.isEmpty ? nil : single, multiLinks: multi.isEmpty ? nil : multi)
        }
    }

    /// The `<key>…</key><dict>…</dict>` pairs to paste inside Info.plist's top-level `<dict>`.
    public static func fragment(for config: GatewayConfig, baseURL: String) -> Result<String, BaseURLError> {
        links(for: config, baseURL: baseURL).map(render)
    }

    /// A whole XML plist holding only the two keys: lintable as it is, and mergeable into an Info.plist
    /// (`PlistBuddy -c "Merge links.plist" Info.plist`).
    public static func document(for config: GatewayConfig, baseURL: String) -> Result<String, BaseURLError> {
        fragment(for: config, baseURL: baseURL).map(wrapInDocument)
    }

    /// Puts a fragment into a plist document's top-level dictionary.
    public static func wrapInDocument(_ fragment: String) -> String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>

            """
        for line in fragment.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            text += "\t\(line)\n"
        }
        text += "</dict>\n</plist>\n"
        return text
    }

    /// Tab-indented as Xcode writes Info.plist; countries sorted, each country's links in config order.
    /// Entries that are not well-typed strings are left out (generated links always are).
    public static func render(_ links: ExternalPurchaseLinks) -> String {
        var text = ""
        if case .dictionary(let entries)? = links.single, !entries.isEmpty {
            text += "<key>\(ExternalPurchaseLinks.singleKey)</key>\n<dict>\n"
            for country in entries.keys.sorted() {
                guard case .string(let url) = entries[country]! else { continue }
                text += "\t<key>\(escape(country))</key>\n\t<string>\(escape(url))</string>\n"
            }
            text += "</dict>\n"
        }
        if case .dictionary(let entries)? = links.multi, !entries.isEmpty {
            text += "<key>\(ExternalPurchaseLinks.multiKey)</key>\n<dict>\n"
            for country in entries.keys.sorted() {
                guard case .array(let elements) = entries[country]! else { continue }
                text += "\t<key>\(escape(country))</key>\n\t<array>\n"
                for case .string(let url) in elements { text += "\t\t<string>\(escape(url))</string>\n" }
                text += "\t</array>\n"
            }
            text += "</dict>\n"
        }
        return text
    }

    /// XML text escaping. Validated paths and hosts hold none of these; a hand-made config might.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }
}
