/// Checks an app's `SKExternalPurchaseLink` / `SKExternalPurchaseMultiLink` against Apple's rules and
/// against the gateway's config, so a plist that App Review or the gateway would turn away is caught before
/// the app ships. Pure: the caller reads the file.
///
/// Findings come in a stable order: each key's countries in sorted order (type, country and URL
/// findings), then the per-country link counts, then mixed hosts, then configured links that are missing.
public enum PlistLinter {
    /// What the app is allowed beyond the defaults.
    public struct Options: Sendable, Equatable {
        /// A qualifying music-streaming app: up to 5 links per country in the EU27, Iceland and Norway.
        public var musicStreaming: Bool
        /// Accept `us` as a country key (older documents list it; the US storefront needs no StoreKit
        /// link since May 2025).
        public var allowUS: Bool

        public init(musicStreaming: Bool = false, allowUS: Bool = false) {
            self.musicStreaming = musicStreaming
            self.allowUS = allowUS
        }
    }

    /// Apple's limit on the URLs of one country.
    public static let maxLinksPerCountry = 5
    /// Apple's limit on one URL, in ASCII characters.
    public static let maxURLLength = 1000
    /// Where music-streaming apps may list more than one link: the EU27, Iceland and Norway.
    public static let musicStreamingStorefronts = CountryCodes.externalPurchaseStorefronts.subtracting(["ru"])

    public static func lint(
        _ links: ExternalPurchaseLinks, config: GatewayConfig, options: Options = Options()
    ) -> [PlistFinding] {
        var lint = Run(config: config, options: options)
        lint.check(links)
        return lint.findings
    }

    /// The state of one lint: findings so far, and what was seen for the cross-entry checks.
    private struct Run {
        let config: GatewayConfig
        let options: Options
        var findings: [PlistFinding] = []
        /// Every well-formed URL string per country key, across both keys.
        var urlsByCountry: [String: [String]] = [:]
        /// (key path, origin) of each URL with a scheme and authority, in the order checked.
        var origins: [(path: String, origin: String)] = []
        /// `id/country` of each configured link and country that a URL under that country points at.
        var listedLinkCountries: Set<String> = []

        init(config: GatewayConfig, options: Options) {
            self.config = config
            self.options = options
        }

        mutating func add(_ path: String, _ code: PlistFinding.Code, _ message: String) {
            findings.append(PlistFinding(path: path, code: code, message: message))
        }

        mutating func check(_ links: ExternalPurchaseLinks) {
            let single = ExternalPurchaseLinks.singleKey
            let multi = ExternalPurchaseLinks.multiKey
            if links.single == nil, links.multi == nil {
                add("", .missingKeys, "no \(single) or \(multi) key")
                return
            }

            var singleCountries: Set<String> = []
            var multiCountries: Set<String> = []

            switch links.single {
            case nil: break
            case .other(let kind)?:
                add(single, .wrongType, "must be a dictionary of country code -> URL string, not \(article(kind))")
            case .dictionary(let entries)?:
                if entries.isEmpty { add(single, .empty, "lists no countries") }
                for country in entries.keys.sorted() {
                    let path = "\(single).\(country)"
                    singleCountries.insert(country)
                    checkCountry(country, path: path)
                    switch entries[country]! {
                    case .string(let url):
                        checkURL(url, country: country, path: path)
                    case .other(let kind):
                        add(path, .wrongType, "must be a URL string, not \(article(kind))")
                    }
                }
            }

            switch links.multi {
            case nil: break
            case .other(let kind)?:
                add(multi, .wrongType, "must be a dictionary of country code -> array of URL strings, not \(article(kind))")
            case .dictionary(let entries)?:
                if entries.isEmpty { add(multi, .empty, "lists no countries") }
                for country in entries.keys.sorted() {
                    let path = "\(multi).\(country)"
                    multiCountries.insert(country)
                    checkCountry(country, path: path)
                    switch entries[country]! {
                    case .other(let kind):
                        add(path, .wrongType, "must be an array of 1 to \(maxLinksPerCountry) URL strings, not \(article(kind))")
                    case .array(let elements):
                        if elements.isEmpty { add(path, .empty, "must list 1 to \(maxLinksPerCountry) URLs, not none") }
                        if elements.count > maxLinksPerCountry {
                            add(path, .tooManyLinks, "lists \(elements.count) URLs; at most \(maxLinksPerCountry)")
                        }
                        var firstIndex: [String: Int] = [:]
                        for (index, element) in elements.enumerated() {
                            let elementPath = "\(path)[\(index)]"
                            switch element {
                            case .other(let kind):
                                add(elementPath, .wrongType, "must be a URL string, not \(article(kind))")
                            case .string(let url):
                                if let earlier = firstIndex[url] {
                                    add(elementPath, .duplicateLink, "the same URL as \(path)[\(earlier)]")
                                    continue
                                }
                                firstIndex[url] = index
                                checkURL(url, country: country, path: elementPath)
                            }
                        }
                    }
                }
            }

            checkCounts(single: singleCountries, multi: multiCountries, arrays: links.multi)
            checkHosts()
            checkMissing(single: singleCountries, multi: multiCountries)
        }

        // MARK: Apple's rules

        mutating func checkCountry(_ country: String, path: String) {
            if !CountryCodes.iso3166Alpha2.contains(country) {
                let lower = country.lowercased()
                if CountryCodes.iso3166Alpha2.contains(lower) {
                    add(path, .invalidCountry, "country keys are lowercase: '\(lower)', not '\(country)'")
                } else {
                    add(path, .invalidCountry, "'\(country)' is not an ISO 3166-1 alpha-2 country code")
                }
            } else if country == "us" {
                if !options.allowUS {
                    add(
                        path, .notAStorefront,
                        "'us' is not an external-purchase storefront (US links need no StoreKit key since May 2025; --allow-us accepts it)")
                }
            } else if !CountryCodes.externalPurchaseStorefronts.contains(country) {
                add(path, .notAStorefront, "'\(country)' is not an external-purchase storefront (the EU27, is, no and ru are)")
            }
        }

        mutating func checkURL(_ url: String, country: String, path: String) {
            urlsByCountry[country, default: []].append(url)
            if !LinkURL.isPrintableASCII(url) {
                add(path, .notASCII, "must be printable ASCII without spaces (percent-encode anything else)")
            }
            let length = url.utf8.count
            if length > maxURLLength {
                add(path, .tooLong, "is \(length) characters; at most \(maxURLLength)")
            }
            guard let parts = LinkURL(url) else {
                add(path, .notAbsolute, "must be an absolute https:// URL with a host, not '\(clip(url))'")
                return
            }
            if parts.scheme.lowercased() != "https" {
                add(path, .notHTTPS, "must be https, not \(parts.scheme)")
            }
            if !parts.hasValidHost {
                add(path, .invalidHost, "'\(clip(String(parts.authority)))' is not a plain host name (and optional :port)")
            }
            if parts.query != nil {
                add(path, .hasQuery, "must not have a query ('?'): StoreKit appends its own, and the path is what tells linkout the link")
            }
            if parts.fragment != nil {
                add(path, .hasFragment, "must not have a fragment ('#')")
            }
            origins.append((path, parts.origin))
            checkAgainstConfig(parts.requestPath, country: country, path: path)
        }

        /// Each URL per country is counted once whether it is under one key or both.
        mutating func checkCounts(single: Set<String>, multi: Set<String>, arrays: PlistDictionary<PlistStringArray>?) {
            for country in single.union(multi).sorted() {
                let unique = Set(urlsByCountry[country] ?? [])
                let path =
                    multi.contains(country)
                    ? "\(ExternalPurchaseLinks.multiKey).\(country)" : "\(ExternalPurchaseLinks.singleKey).\(country)"
                let musicAllowed = options.musicStreaming && musicStreamingStorefronts.contains(country)
                if musicAllowed {
                    var arrayTooLong = false
                    if case .dictionary(let entries)? = arrays, case .array(let elements)? = entries[country] {
                        arrayTooLong = elements.count > maxLinksPerCountry
                    }
                    if unique.count > maxLinksPerCountry, !arrayTooLong {
                        add(
                            path, .tooManyLinks,
                            "\(unique.count) different links for \(country) across both keys; at most \(maxLinksPerCountry)")
                    }
                } else if unique.count > 1 {
                    let why =
                        options.musicStreaming
                        ? "music-streaming apps may list more than one only in the EU27, is and no"
                        : "more than one is allowed only to qualifying music-streaming apps (--music-streaming)"
                    add(path, .multipleLinksNotAllowed, "\(unique.count) different links for \(country) across both keys; \(why)")
                }
            }
        }

        // MARK: The gateway's config

        /// URLs on hosts other than the one most of them use (the first seen, on a tie).
        mutating func checkHosts() {
            var counts: [String: Int] = [:]
            var order: [String] = []
            for (_, origin) in origins {
                if counts[origin] == nil { order.append(origin) }
                counts[origin, default: 0] += 1
            }
            guard order.count > 1 else { return }
            let main = order.reduce(order[0]) { counts[$1]! > counts[$0]! ? $1 : $0 }
            for (path, origin) in origins where origin != main {
                add(
                    path, .mixedHosts, "is on \(origin), while \(counts[main]!) other URL\(counts[main]! == 1 ? " is" : "s are") on \(main)"
                )
            }
        }

        mutating func checkAgainstConfig(_ requestPath: String, country: String, path: String) {
            if let link = config.links.first(where: { $0.path == requestPath }) {
                if link.servedCountries.contains(country) {
                    listedLinkCountries.insert(link.id + "/" + country)
                } else {
                    let countries =
                        link.servedCountries.count == 1
                        ? "country \(link.country)" : "countries \(link.servedCountries.joined(separator: ", "))"
                    add(path, .wrongCountry, "path \(requestPath) is link '\(link.id)' for \(countries), but is listed under \(country)")
                }
                return
            }
            let own = config.links.filter { $0.servedCountries.contains(country) }.map(\.path)
            var message = "path \(clip(requestPath)) is not a link linkout serves"
            if requestPath.count > 1, requestPath.hasSuffix("/"), own.contains(String(requestPath.dropLast())) {
                message += " (did you mean \(requestPath.dropLast())? paths are matched exactly)"
            } else if own.isEmpty {
                message += "; the config has no link for \(country)"
            } else {
                message += "; the config's links for \(country): \(own.joined(separator: ", "))"
            }
            add(path, .unknownPath, message)
        }

        mutating func checkMissing(single: Set<String>, multi: Set<String>) {
            // A shared link must be listed under each of its countries. A link that expects no token need
            // not be listed at all: the app opens it without StoreKit.
            let served = config.links.filter { $0.token == .required }.flatMap { link in
                link.servedCountries.map { (link: link, country: $0) }
            }
            let linksPerCountry = Dictionary(grouping: served, by: \.country).mapValues(\.count)
            for (link, country) in served where !listedLinkCountries.contains(link.id + "/" + country) {
                // Point where the link would go: the key already holding the country, else the key the
                // generator would use.
                let key =
                    multi.contains(country) || (!single.contains(country) && linksPerCountry[country]! > 1)
                    ? ExternalPurchaseLinks.multiKey : ExternalPurchaseLinks.singleKey
                add(
                    "\(key).\(country)", .missingLink,
                    "link '\(link.id)' (\(link.path)) is configured for \(country) but no URL for \(country) points at it")
            }
        }

        /// "an integer", "a string", "data".
        private func article(_ kind: String) -> String {
            if kind == "data" { return kind }
            return (kind.first.map { "aeiou".contains($0) } ?? false) ? "an \(kind)" : "a \(kind)"
        }

        /// Long or odd input shortened for a one-line message.
        private func clip(_ text: String) -> String {
            text.count > 80 ? String(text.prefix(77)) + "..." : text
        }
    }
}
