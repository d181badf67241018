import Testing

@testable import LinkOutCore

@Suite("PlistLinter")
struct PlistLinterTests {
    /// The shipped config's links: nl, de and de-annual (two for de), fr.
    static let config = GatewayConfig(
        apps: [],
        links: [
            Link(id: "nl", path: "/nl", country: "nl", destinations: [Destination(url: "https://checkout.example.com/nl")]),
            Link(id: "de", path: "/de", country: "de", destinations: [Destination(url: "https://checkout.example.com/de")]),
            Link(id: "de-annual", path: "/de/annual", country: "de", destinations: [Destination(url: "https://checkout.example.com/de")]),
            Link(id: "fr", path: "/fr", country: "fr", destinations: [Destination(url: "https://checkout.example.com/fr")]),
        ])

    static let base = "https://pay.example.com"
    static let music = PlistLinter.Options(musicStreaming: true)

    /// A plist that lints clean for `config` with `--music-streaming`.
    static let cleanSingle = ["nl": base + "/nl", "fr": base + "/fr"]
    static let cleanMulti = ["de": [base + "/de", base + "/de/annual"]]

    static func lint(
        single: [String: String]? = cleanSingle, multi: [String: [String]]? = cleanMulti,
        options: PlistLinter.Options = music, config: GatewayConfig = config
    ) -> [PlistFinding] {
        PlistLinter.lint(ExternalPurchaseLinks(links: single, multiLinks: multi), config: config, options: options)
    }

    /// Expects exactly one finding with `code`, at `path`, whose message holds `text`.
    static func expectOne(
        _ findings: [PlistFinding], _ code: PlistFinding.Code, at path: String, saying text: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let matching = findings.filter { $0.code == code }
        #expect(matching.count == 1, "one \(code.rawValue) expected in \(findings)", sourceLocation: sourceLocation)
        #expect(matching.first?.path == path, "\(findings)", sourceLocation: sourceLocation)
        #expect(matching.first?.message.contains(text) == true, "…\(text)… in \(findings)", sourceLocation: sourceLocation)
    }

    // MARK: Clean plists

    @Test("the plist for the config lints clean for a music-streaming app")
    func clean() {
        #expect(Self.lint() == [])
    }

    @Test("one link per country lints clean without --music-streaming")
    func cleanSingleLinks() {
        let config = GatewayConfig(apps: [], links: Self.config.links.filter { $0.id != "de-annual" })
        #expect(
            Self.lint(
                single: ["nl": Self.base + "/nl", "fr": Self.base + "/fr", "de": Self.base + "/de"], multi: nil,
                options: .init(), config: config) == [])
        // The same countries under SKExternalPurchaseMultiLink, one link each, are as good.
        #expect(
            Self.lint(
                single: nil, multi: ["nl": [Self.base + "/nl"], "fr": [Self.base + "/fr"], "de": [Self.base + "/de"]],
                options: .init(), config: config) == [])
    }

    @Test("a shared link is listed under each of its countries, and missing under one is reported")
    func sharedLink() {
        let shared = GatewayConfig(
            apps: [],
            links: [
                Link(
                    id: "benelux", path: "/benelux", country: "be", destinations: [Destination(url: "https://checkout.example.com/be")],
                    countries: [CountryDestinations(country: "lu"), CountryDestinations(country: "nl")])
            ])
        let generated = try! PlistGenerator.links(for: shared, baseURL: Self.base).get()
        let everyCountry = ["be": Self.base + "/benelux", "lu": Self.base + "/benelux", "nl": Self.base + "/benelux"]
        #expect(generated == ExternalPurchaseLinks(links: everyCountry, multiLinks: nil))
        #expect(Self.lint(single: everyCountry, multi: nil, config: shared).isEmpty)

        let findings = Self.lint(
            single: ["be": Self.base + "/benelux", "lu": Self.base + "/benelux", "fr": Self.base + "/benelux"], multi: nil, config: shared)
        Self.expectOne(findings, .wrongCountry, at: "SKExternalPurchaseLink.fr", saying: "countries be, lu, nl")
        Self.expectOne(findings, .missingLink, at: "SKExternalPurchaseLink.nl", saying: "link 'benelux' (/benelux) is configured for nl")
    }

    @Test("a link shared by both keys counts once")
    func sharedLinkCountsOnce() {
        let config = GatewayConfig(apps: [], links: [Self.config.links[0]])
        let url = Self.base + "/nl"
        #expect(Self.lint(single: ["nl": url], multi: ["nl": [url]], options: .init(), config: config) == [])
    }

    @Test("a port and an upper-case scheme are fine; hosts compare case-insensitively")
    func portAndCase() {
        let findings = Self.lint(
            single: ["nl": "HTTPS://Pay.Example.com:8443/nl", "fr": "https://pay.example.com:8443/fr"],
            multi: ["de": ["https://pay.example.com:8443/de", "https://pay.example.com:8443/de/annual"]])
        #expect(findings == [])
    }

    // MARK: One finding of each kind

    @Test("neither key: missing_keys, and nothing else")
    func missingKeys() {
        let findings = Self.lint(single: nil, multi: nil)
        #expect(
            findings == [
                PlistFinding(path: "", code: .missingKeys, message: "no SKExternalPurchaseLink or SKExternalPurchaseMultiLink key")
            ])
        #expect(findings[0].description == "missing_keys: no SKExternalPurchaseLink or SKExternalPurchaseMultiLink key")
    }

    @Test("wrong types are reported where they are, with what was found")
    func wrongTypes() {
        var links = ExternalPurchaseLinks(single: .other(kind: "array"), multi: .other(kind: "string"))
        var findings = PlistLinter.lint(links, config: Self.config, options: Self.music)
        #expect(findings.filter { $0.code == .wrongType }.map(\.path) == ["SKExternalPurchaseLink", "SKExternalPurchaseMultiLink"])
        #expect(findings[0].message == "must be a dictionary of country code -> URL string, not an array")
        #expect(findings[1].message == "must be a dictionary of country code -> array of URL strings, not a string")

        links = ExternalPurchaseLinks(
            single: .dictionary(["nl": .string(Self.base + "/nl"), "fr": .other(kind: "integer")]),
            multi: .dictionary([
                "de": .array([.string(Self.base + "/de"), .other(kind: "boolean")]),
                "at": .other(kind: "string"),
            ]))
        findings = PlistLinter.lint(links, config: Self.config, options: Self.music)
        #expect(
            findings.filter { $0.code == .wrongType } == [
                PlistFinding(path: "SKExternalPurchaseLink.fr", code: .wrongType, message: "must be a URL string, not an integer"),
                PlistFinding(
                    path: "SKExternalPurchaseMultiLink.at", code: .wrongType,
                    message: "must be an array of 1 to 5 URL strings, not a string"),
                PlistFinding(path: "SKExternalPurchaseMultiLink.de[1]", code: .wrongType, message: "must be a URL string, not a boolean"),
            ])
    }

    @Test("an empty dictionary or array: empty")
    func empty() {
        var findings = Self.lint(single: [:], multi: nil)
        #expect(findings.contains(PlistFinding(path: "SKExternalPurchaseLink", code: .empty, message: "lists no countries")))
        findings = Self.lint(multi: ["de": [Self.base + "/de", Self.base + "/de/annual"], "at": []])
        Self.expectOne(findings, .empty, at: "SKExternalPurchaseMultiLink.at", saying: "1 to 5 URLs")
    }

    @Test("country keys: lowercase ISO codes only")
    func invalidCountry() {
        var findings = Self.lint(single: ["nl": Self.base + "/nl", "fr": Self.base + "/fr", "NL": "https://pay.example.com/x"])
        Self.expectOne(findings, .invalidCountry, at: "SKExternalPurchaseLink.NL", saying: "lowercase: 'nl', not 'NL'")
        findings = Self.lint(single: ["nl": Self.base + "/nl", "fr": Self.base + "/fr", "xx": Self.base + "/x"])
        Self.expectOne(findings, .invalidCountry, at: "SKExternalPurchaseLink.xx", saying: "not an ISO 3166-1 alpha-2")
    }

    @Test("countries outside the external-purchase storefronts; us only with allowUS")
    func notAStorefront() {
        let single = ["nl": Self.base + "/nl", "fr": Self.base + "/fr", "jp": Self.base + "/jp", "us": Self.base + "/us"]
        let config = GatewayConfig(
            apps: [],
            links: Self.config.links + [
                Link(id: "jp", path: "/jp", country: "jp", destinations: [Destination(url: "https://a.example/")]),
                Link(id: "us", path: "/us", country: "us", destinations: [Destination(url: "https://a.example/")]),
            ])
        var findings = Self.lint(single: single, config: config)
        #expect(findings.filter { $0.code == .notAStorefront }.map(\.path) == ["SKExternalPurchaseLink.jp", "SKExternalPurchaseLink.us"])
        #expect(findings.count == 2)
        #expect(findings[1].message.contains("--allow-us"))
        findings = Self.lint(single: single, options: .init(musicStreaming: true, allowUS: true), config: config)
        Self.expectOne(findings, .notAStorefront, at: "SKExternalPurchaseLink.jp")
    }

    /// (the URL listed for nl, the code expected, text of its message)
    static let badURLs: [(String, PlistFinding.Code, String)] = [
        ("/nl", .notAbsolute, "absolute https:// URL"),
        ("pay.example.com/nl", .notAbsolute, "absolute"),
        ("https:///nl", .notAbsolute, "with a host"),
        ("http://pay.example.com/nl", .notHTTPS, "must be https, not http"),
        ("https://pay.example.com/nl?from=app", .hasQuery, "must not have a query"),
        ("https://pay.example.com/nl#top", .hasFragment, "fragment"),
        ("https://pay.example.com/nl/café", .notASCII, "printable ASCII"),
        ("https://pay.example.com/nl page", .notASCII, "without spaces"),
        ("https://pay.example.com/" + String(repeating: "a", count: 977), .tooLong, "is 1001 characters; at most 1000"),
        ("https://user@pay.example.com/nl", .invalidHost, "'user@pay.example.com'"),
        ("https://pay..example.com/nl", .invalidHost, "plain host"),
        ("https://pay.example.com:99999/nl", .invalidHost, "plain host"),
    ]

    @Test("URLs that break Apple's rules", arguments: badURLs.indices)
    func badURL(index: Int) {
        let (url, code, text) = Self.badURLs[index]
        let findings = Self.lint(single: ["nl": url, "fr": Self.base + "/fr"])
        Self.expectOne(findings, code, at: "SKExternalPurchaseLink.nl", saying: text)
    }

    @Test("exactly 1,000 characters is allowed")
    func longestURL() {
        let url = "https://pay.example.com/" + String(repeating: "a", count: 976)
        #expect(url.utf8.count == 1000)
        #expect(!Self.lint(single: ["nl": url, "fr": Self.base + "/fr"]).contains { $0.code == .tooLong })
    }

    @Test("the same URL twice in an array")
    func duplicateLink() {
        let findings = Self.lint(multi: ["de": [Self.base + "/de", Self.base + "/de/annual", Self.base + "/de"]])
        #expect(
            findings == [
                PlistFinding(
                    path: "SKExternalPurchaseMultiLink.de[2]", code: .duplicateLink,
                    message: "the same URL as SKExternalPurchaseMultiLink.de[0]")
            ])
    }

    @Test("more than 5 URLs in an array, or more than 5 different links across both keys")
    func tooManyLinks() {
        let six = (1...6).map { "\(Self.base)/de/\($0)" }
        var findings = Self.lint(multi: ["de": six + [Self.base + "/de", Self.base + "/de/annual"]])
        Self.expectOne(findings, .tooManyLinks, at: "SKExternalPurchaseMultiLink.de", saying: "lists 8 URLs; at most 5")

        findings = Self.lint(
            single: ["nl": Self.base + "/nl", "fr": Self.base + "/fr", "de": Self.base + "/de/6"],
            multi: ["de": [Self.base + "/de", Self.base + "/de/annual"] + six.prefix(3)])
        Self.expectOne(findings, .tooManyLinks, at: "SKExternalPurchaseMultiLink.de", saying: "6 different links for de across both keys")
    }

    @Test("more than one link for a country without the music-streaming allowance")
    func multipleLinksNotAllowed() {
        var findings = Self.lint(options: .init())
        Self.expectOne(
            findings, .multipleLinksNotAllowed, at: "SKExternalPurchaseMultiLink.de",
            saying: "2 different links for de across both keys; more than one is allowed only to qualifying music-streaming apps")
        #expect(findings.count == 1)

        // Split across the two keys: still two links for de.
        findings = Self.lint(
            single: Self.cleanSingle.merging(["de": Self.base + "/de"]) { $1 },
            multi: ["de": [Self.base + "/de/annual"]], options: .init())
        Self.expectOne(findings, .multipleLinksNotAllowed, at: "SKExternalPurchaseMultiLink.de")

        // Music-streaming apps may have several only in the EU27, is and no, not in ru.
        let config = GatewayConfig(
            apps: [],
            links: Self.config.links + [
                Link(id: "ru", path: "/ru", country: "ru", destinations: [Destination(url: "https://a.example/")]),
                Link(id: "ru-b", path: "/ru/b", country: "ru", destinations: [Destination(url: "https://a.example/")]),
            ])
        findings = Self.lint(multi: Self.cleanMulti.merging(["ru": [Self.base + "/ru", Self.base + "/ru/b"]]) { $1 }, config: config)
        Self.expectOne(findings, .multipleLinksNotAllowed, at: "SKExternalPurchaseMultiLink.ru", saying: "only in the EU27, is and no")
    }

    @Test("URLs on another host than the rest")
    func mixedHosts() {
        let findings = Self.lint(single: ["nl": "https://other.example.net/nl", "fr": Self.base + "/fr"])
        #expect(
            findings == [
                PlistFinding(
                    path: "SKExternalPurchaseLink.nl", code: .mixedHosts,
                    message: "is on https://other.example.net, while 3 other URLs are on https://pay.example.com")
            ])
    }

    @Test("a path the config does not serve")
    func unknownPath() {
        var findings = Self.lint(single: ["nl": Self.base + "/nl/", "fr": Self.base + "/fr"])
        #expect(
            findings.filter { $0.code == .unknownPath }.map(\.message) == [
                "path /nl/ is not a link linkout serves (did you mean /nl? paths are matched exactly)"
            ])
        findings = Self.lint(single: ["nl": Self.base + "/nl", "fr": Self.base + "/fr", "at": Self.base + "/at"])
        Self.expectOne(findings, .unknownPath, at: "SKExternalPurchaseLink.at", saying: "the config has no link for at")
        findings = Self.lint(multi: ["de": [Self.base + "/de", Self.base + "/de/annual", Self.base + "/de/monthly"]])
        Self.expectOne(
            findings, .unknownPath, at: "SKExternalPurchaseMultiLink.de[2]", saying: "the config's links for de: /de, /de/annual")
        // A URL with no path asks for "/".
        findings = Self.lint(single: ["nl": Self.base, "fr": Self.base + "/fr"])
        #expect(findings.contains { $0.code == .unknownPath && $0.message.hasPrefix("path / is not") })
    }

    @Test("a path configured for another country, named with both countries")
    func wrongCountry() {
        let findings = Self.lint(single: ["nl": Self.base + "/fr", "fr": Self.base + "/fr"])
        Self.expectOne(
            findings, .wrongCountry, at: "SKExternalPurchaseLink.nl", saying: "path /fr is link 'fr' for country fr, but is listed under nl"
        )
        // nl's own link is then missing.
        Self.expectOne(findings, .missingLink, at: "SKExternalPurchaseLink.nl", saying: "link 'nl' (/nl)")
    }

    @Test("configured links missing from the plist, pointed at the key they belong in")
    func missingLink() {
        let findings = Self.lint(single: ["nl": Self.base + "/nl"], multi: ["de": [Self.base + "/de"]])
        #expect(
            findings.filter { $0.code == .missingLink } == [
                PlistFinding(
                    path: "SKExternalPurchaseMultiLink.de", code: .missingLink,
                    message: "link 'de-annual' (/de/annual) is configured for de but no URL for de points at it"),
                PlistFinding(
                    path: "SKExternalPurchaseLink.fr", code: .missingLink,
                    message: "link 'fr' (/fr) is configured for fr but no URL for fr points at it"),
            ])
        #expect(findings.count == 2)
        // A multi-link country absent altogether goes under SKExternalPurchaseMultiLink, as generate puts it.
        let none = Self.lint(single: Self.cleanSingle, multi: [:])
        #expect(
            none.filter { $0.code == .missingLink }.map(\.path) == ["SKExternalPurchaseMultiLink.de", "SKExternalPurchaseMultiLink.de"])
    }

    @Test("findings come in a stable order, each printed as path: code: message")
    func orderAndFormat() {
        let findings = Self.lint(
            single: ["nl": "http://pay.example.com/nl?x", "fr": Self.base + "/fr"],
            multi: ["de": [Self.base + "/de", Self.base + "/de/annual"]], options: .init())
        #expect(
            findings.map(\.description) == [
                "SKExternalPurchaseLink.nl: not_https: must be https, not http",
                "SKExternalPurchaseLink.nl: has_query: must not have a query ('?'): StoreKit appends its own, and the path is what tells linkout the link",
                "SKExternalPurchaseMultiLink.de: multiple_links_not_allowed: 2 different links for de across both keys; more than one is allowed only to qualifying music-streaming apps (--music-streaming)",
                "SKExternalPurchaseLink.nl: mixed_hosts: is on http://pay.example.com, while 3 other URLs are on https://pay.example.com",
            ])
    }

    @Test("every finding code is exercised by a test in this suite")
    func everyCodeCovered() {
        // Keep in step with the tests above: adding a code without a test fails here.
        let tested: Set<PlistFinding.Code> = [
            .missingKeys, .wrongType, .empty, .invalidCountry, .notAStorefront, .notAbsolute, .notHTTPS, .hasQuery,
            .hasFragment, .notASCII, .tooLong, .invalidHost, .duplicateLink, .tooManyLinks, .multipleLinksNotAllowed,
            .mixedHosts, .unknownPath, .wrongCountry, .missingLink,
        ]
        #expect(tested == Set(PlistFinding.Code.allCases))
        #expect(Set(PlistFinding.Code.allCases.map(\.rawValue)).count == PlistFinding.Code.allCases.count)
    }
}
