import Foundation
import LinkOutTestSupport
import Testing

/// `linkout plist lint` and `linkout plist generate`, run as the real binary on plists written here, each
/// checked as XML and again as a binary plist.
@Suite struct PlistCommandTests {
    static let shippedConfig = LinkoutBinary.packageRoot.appendingPathComponent("config/linkout.json").path
    static let host = "https://pay.example.com"

    /// The links of the test config (as the shipped config had them): one for nl and fr, two for de.
    static let links: [(id: String, path: String, country: String)] = [
        ("nl", "/nl", "nl"), ("de", "/de", "de"), ("de-annual", "/de/annual", "de"), ("fr", "/fr", "fr"),
    ]

    /// A config with `links` less the ids given, written into `folder`.
    static func config(without ids: [String] = [], in folder: TemporaryFolder) -> String {
        let entries = links.filter { !ids.contains($0.id) }.map {
            #"{"id":"\#($0.id)","path":"\#($0.path)","country":"\#($0.country)","destinations":[{"url":"https://checkout.example.com\#($0.path)"}]}"#
        }
        return folder.write("config.json", TestConfig.json(links: "[" + entries.joined(separator: ",") + "]"))
    }

    /// An XML plist: an Info.plist-like top-level dict holding `body`.
    static func xmlPlist(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>CFBundleIdentifier</key>
        \t<string>com.example</string>
        \(body)
        </dict>
        </plist>

        """
    }

    /// Writes `body` as `name.xml.plist` (text) and `name.binary.plist` (converted by Foundation).
    static func writeBoth(_ body: String, name: String, in folder: TemporaryFolder) throws -> [String] {
        let xml = folder.write("\(name).xml.plist", xmlPlist(body))
        let object = try PropertyListSerialization.propertyList(from: Data(xmlPlist(body).utf8), options: [], format: nil)
        let binary = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        #expect(binary.starts(with: Array("bplist00".utf8)))
        let binaryPath = folder.file("\(name).binary.plist")
        #expect(FileManager.default.createFile(atPath: binaryPath, contents: binary))
        return [xml, binaryPath]
    }

    /// Lints `body` as XML and as binary; both must give `status` and exactly `lines` on stdout (with
    /// `FILE` standing for the file's path), in that order, and nothing on stderr.
    static func expectLint(
        _ body: String, config: String? = nil, options: [String] = [], status: Int32, lines: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let folder = TemporaryFolder()
        let config = config ?? Self.config(in: folder)
        for file in try writeBoth(body, name: "Info", in: folder) {
            let result = try LinkoutBinary.run(["plist", "lint", "--config", config] + options + [file])
            #expect(result.status == status, "\(file): \(result.stdout) \(result.stderr)", sourceLocation: sourceLocation)
            let got = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            let expected = lines.map { $0.replacingOccurrences(of: "FILE", with: file) }
            // Line by line, so a failure shows the one line that differs.
            #expect(got.count == expected.count, "\(file): \(got.count) lines: \(result.stdout)", sourceLocation: sourceLocation)
            for index in 0..<max(got.count, expected.count) {
                let line = index < got.count ? got[index] : nil
                #expect(line == (index < expected.count ? expected[index] : nil), "\(file) line \(index)", sourceLocation: sourceLocation)
            }
            #expect(result.stderr == "", sourceLocation: sourceLocation)
        }
    }

    // MARK: Clean plists and the round trip

    @Test func generatedPlistLintsCleanAgainstTheSameConfig() throws {
        let folder = TemporaryFolder()
        let config = Self.config(in: folder)
        let document = try LinkoutBinary.run([
            "plist", "generate", "--config", config, "--base-url", Self.host, "--document", "--music-streaming",
        ])
        #expect(document.status == 0, "\(document.stderr)")
        #expect(document.stderr == "")
        let saved = folder.write("links.plist", document.stdout)
        let lint = try LinkoutBinary.run(["plist", "lint", "--config", config, "--music-streaming", saved])
        #expect(lint.status == 0, "\(lint.stdout)")
        #expect(lint.stdout == "\(saved): OK (4 links for 3 countries: de fr nl)\n")

        // The fragment alone, pasted into an Info.plist, is the same.
        let fragment = try LinkoutBinary.run(["plist", "generate", "--config", config, "--base-url", Self.host + "/", "--music-streaming"])
        #expect(fragment.status == 0)
        #expect(
            fragment.stdout.hasPrefix(
                "<key>SKExternalPurchaseLink</key>\n<dict>\n\t<key>fr</key>\n\t<string>https://pay.example.com/fr</string>\n"))
        #expect(
            fragment.stdout.contains(
                "<key>SKExternalPurchaseMultiLink</key>\n<dict>\n\t<key>de</key>\n\t<array>\n\t\t<string>https://pay.example.com/de</string>\n\t\t<string>https://pay.example.com/de/annual</string>\n\t</array>\n</dict>\n"
            ))
        for file in try Self.writeBoth(fragment.stdout, name: "pasted", in: folder) {
            let pasted = try LinkoutBinary.run(["plist", "lint", "--config", config, "--music-streaming", file])
            #expect(pasted.status == 0, "\(file): \(pasted.stdout)")
        }
    }

    @Test func shippedConfigRoundTrips() throws {
        let folder = TemporaryFolder()
        // One link per country: the shipped config is valid for any app, not only music-streaming ones.
        let document = try LinkoutBinary.run(["plist", "generate", "--base-url", Self.host, "--document"])
        #expect(document.status == 0, "\(document.stderr)")
        #expect(document.stderr.isEmpty, "no warnings: \(document.stderr)")
        let saved = folder.write("links.plist", document.stdout)
        let lint = try LinkoutBinary.run(["plist", "lint", saved])
        #expect(lint.status == 0, "\(lint.stdout)")
        #expect(lint.stdout.hasPrefix("\(saved): OK ("))
    }

    @Test func generateWarnsAboutWhatTheAppMayNotList() throws {
        // Two links for de: fine for a music-streaming app only.
        let folder = TemporaryFolder()
        let result = try LinkoutBinary.run(["plist", "generate", "--config", Self.config(in: folder), "--base-url", Self.host])
        #expect(result.status == 0)
        #expect(result.stdout.contains("<key>SKExternalPurchaseMultiLink</key>"))
        #expect(
            result.stderr
                == "warning: SKExternalPurchaseMultiLink.de: multiple_links_not_allowed: 2 different links for de across both keys; more than one is allowed only to qualifying music-streaming apps (--music-streaming)\n"
        )
    }

    @Test(arguments: [
        ("http://pay.example.com", "must start with https://"),
        ("https://pay.example.com/linkout", "must not have a path ('/linkout')"),
        ("https://pay.example.com?a=1", "must not have a query"),
        ("https://pay.example.com#a", "must not have a fragment"),
        ("pay.example.com", "must be an absolute https:// URL"),
    ])
    func generateRefusesABadBaseURL(baseURL: String, rule: String) throws {
        let result = try LinkoutBinary.run(["plist", "generate", "--config", Self.shippedConfig, "--base-url", baseURL])
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.stderr.hasPrefix("error: --base-url: base URL '\(baseURL)' "))
        #expect(result.stderr.contains(rule), "\(result.stderr)")
    }

    @Test func oneLinkPerCountryLintsCleanWithoutMusicStreaming() throws {
        let folder = TemporaryFolder()
        try Self.expectLint(
            """
            <key>SKExternalPurchaseLink</key>
            <dict>
            \t<key>nl</key><string>https://pay.example.com/nl</string>
            \t<key>fr</key><string>https://pay.example.com/fr</string>
            \t<key>de</key><string>https://pay.example.com/de</string>
            </dict>
            <key>SKExternalPurchaseMultiLink</key>
            <dict>
            \t<key>de</key><array><string>https://pay.example.com/de</string></array>
            </dict>
            """,
            config: Self.config(without: ["de-annual"], in: folder),
            status: 0, lines: ["FILE: OK (3 links for 3 countries: de fr nl)"])
    }

    // MARK: Every kind of finding, in XML and binary

    @Test func wrongTypesAndEmptyEntries() throws {
        try Self.expectLint(
            """
            <key>SKExternalPurchaseLink</key>
            <dict>
            \t<key>nl</key><string>https://pay.example.com/nl</string>
            \t<key>fr</key><integer>7</integer>
            </dict>
            <key>SKExternalPurchaseMultiLink</key>
            <dict>
            \t<key>de</key>
            \t<array>
            \t\t<string>https://pay.example.com/de</string>
            \t\t<string>https://pay.example.com/de/annual</string>
            \t\t<true/>
            \t\t<date>2026-01-01T00:00:00Z</date>
            \t\t<data>AAE=</data>
            \t</array>
            \t<key>at</key><string>https://pay.example.com/at</string>
            \t<key>ie</key><array/>
            \t<key>it</key><real>1.5</real>
            \t<key>pt</key><dict/>
            </dict>
            """,
            options: ["--music-streaming"], status: 1,
            lines: [
                "SKExternalPurchaseLink.fr: wrong_type: must be a URL string, not an integer",
                "SKExternalPurchaseMultiLink.at: wrong_type: must be an array of 1 to 5 URL strings, not a string",
                "SKExternalPurchaseMultiLink.de[2]: wrong_type: must be a URL string, not a boolean",
                "SKExternalPurchaseMultiLink.de[3]: wrong_type: must be a URL string, not a date",
                "SKExternalPurchaseMultiLink.de[4]: wrong_type: must be a URL string, not data",
                "SKExternalPurchaseMultiLink.ie: empty: must list 1 to 5 URLs, not none",
                "SKExternalPurchaseMultiLink.it: wrong_type: must be an array of 1 to 5 URL strings, not a real",
                "SKExternalPurchaseMultiLink.pt: wrong_type: must be an array of 1 to 5 URL strings, not a dictionary",
                "SKExternalPurchaseLink.fr: missing_link: link 'fr' (/fr) is configured for fr but no URL for fr points at it",
            ])
    }

    @Test func keysOfTheWrongTypeOrEmpty() throws {
        try Self.expectLint(
            """
            <key>SKExternalPurchaseLink</key><array><string>https://pay.example.com/nl</string></array>
            <key>SKExternalPurchaseMultiLink</key><dict/>
            """,
            status: 1,
            lines: [
                "SKExternalPurchaseLink: wrong_type: must be a dictionary of country code -> URL string, not an array",
                "SKExternalPurchaseMultiLink: empty: lists no countries",
                "SKExternalPurchaseLink.nl: missing_link: link 'nl' (/nl) is configured for nl but no URL for nl points at it",
                "SKExternalPurchaseMultiLink.de: missing_link: link 'de' (/de) is configured for de but no URL for de points at it",
                "SKExternalPurchaseMultiLink.de: missing_link: link 'de-annual' (/de/annual) is configured for de but no URL for de points at it",
                "SKExternalPurchaseLink.fr: missing_link: link 'fr' (/fr) is configured for fr but no URL for fr points at it",
            ])
    }

    @Test func applesURLAndCountryRulesAndTheConfig() throws {
        let long = "https://pay.example.com/be/" + String(repeating: "a", count: 990)
        try Self.expectLint(
            """
            <key>SKExternalPurchaseLink</key>
            <dict>
            \t<key>nl</key><string>http://pay.example.com/nl?src=app#top</string>
            \t<key>fr</key><string>https://pay.example.com/fr/</string>
            \t<key>jp</key><string>https://pay.example.com/jp</string>
            \t<key>us</key><string>https://pay.example.com/us</string>
            \t<key>XX</key><string>/relative</string>
            </dict>
            <key>SKExternalPurchaseMultiLink</key>
            <dict>
            \t<key>de</key>
            \t<array>
            \t\t<string>https://pay.example.com/de</string>
            \t\t<string>https://pay.example.com/de/annual</string>
            \t\t<string>https://pay.example.com/de</string>
            \t</array>
            \t<key>at</key><array><string>https://user@pay.example.com/at</string></array>
            \t<key>be</key><array><string>\(long)</string></array>
            \t<key>es</key><array><string>https://pay.example.com/café</string></array>
            \t<key>pl</key><array><string>https://other.example.net/pl</string></array>
            \t<key>se</key><array><string>https://pay.example.com/fr</string></array>
            </dict>
            """,
            status: 1,
            lines: [
                "SKExternalPurchaseLink.XX: invalid_country: 'XX' is not an ISO 3166-1 alpha-2 country code",
                "SKExternalPurchaseLink.XX: not_absolute: must be an absolute https:// URL with a host, not '/relative'",
                "SKExternalPurchaseLink.fr: unknown_path: path /fr/ is not a link linkout serves (did you mean /fr? paths are matched exactly)",
                "SKExternalPurchaseLink.jp: not_a_storefront: 'jp' is not an external-purchase storefront (the EU27, is, no and ru are)",
                "SKExternalPurchaseLink.jp: unknown_path: path /jp is not a link linkout serves; the config has no link for jp",
                "SKExternalPurchaseLink.nl: not_https: must be https, not http",
                "SKExternalPurchaseLink.nl: has_query: must not have a query ('?'): StoreKit appends its own, and the path is what tells linkout the link",
                "SKExternalPurchaseLink.nl: has_fragment: must not have a fragment ('#')",
                "SKExternalPurchaseLink.us: not_a_storefront: 'us' is not an external-purchase storefront (US links need no StoreKit key since May 2025; --allow-us accepts it)",
                "SKExternalPurchaseLink.us: unknown_path: path /us is not a link linkout serves; the config has no link for us",
                "SKExternalPurchaseMultiLink.at[0]: invalid_host: 'user@pay.example.com' is not a plain host name (and optional :port)",
                "SKExternalPurchaseMultiLink.at[0]: unknown_path: path /at is not a link linkout serves; the config has no link for at",
                "SKExternalPurchaseMultiLink.be[0]: too_long: is 1017 characters; at most 1000",
                "SKExternalPurchaseMultiLink.be[0]: unknown_path: path /be/\(String(repeating: "a", count: 73))... is not a link linkout serves; the config has no link for be",
                "SKExternalPurchaseMultiLink.de[2]: duplicate_link: the same URL as SKExternalPurchaseMultiLink.de[0]",
                "SKExternalPurchaseMultiLink.es[0]: not_ascii: must be printable ASCII without spaces (percent-encode anything else)",
                "SKExternalPurchaseMultiLink.es[0]: unknown_path: path /café is not a link linkout serves; the config has no link for es",
                "SKExternalPurchaseMultiLink.pl[0]: unknown_path: path /pl is not a link linkout serves; the config has no link for pl",
                "SKExternalPurchaseMultiLink.se[0]: wrong_country: path /fr is link 'fr' for country fr, but is listed under se",
                "SKExternalPurchaseMultiLink.de: multiple_links_not_allowed: 2 different links for de across both keys; more than one is allowed only to qualifying music-streaming apps (--music-streaming)",
                "SKExternalPurchaseLink.nl: mixed_hosts: is on http://pay.example.com, while 8 other URLs are on https://pay.example.com",
                "SKExternalPurchaseMultiLink.at[0]: mixed_hosts: is on https://user@pay.example.com, while 8 other URLs are on https://pay.example.com",
                "SKExternalPurchaseMultiLink.pl[0]: mixed_hosts: is on https://other.example.net, while 8 other URLs are on https://pay.example.com",
                "SKExternalPurchaseLink.fr: missing_link: link 'fr' (/fr) is configured for fr but no URL for fr points at it",
            ])
    }

    @Test func linkCountsForAMusicStreamingApp() throws {
        // de: six links across the two keys (at most 5); ru: two links, where even music apps may have one;
        // at: six in one array.
        var links = (1...6).map { #"{"id":"de-\#($0)","path":"/de/\#($0)","country":"de","destinations":[{"url":"https://a.example/"}]}"# }
        links += (1...6).map { #"{"id":"at-\#($0)","path":"/at/\#($0)","country":"at","destinations":[{"url":"https://a.example/"}]}"# }
        links += ["ru", "ru/b"].map {
            #"{"id":"\#($0.replacingOccurrences(of: "/", with: "-"))","path":"/\#($0)","country":"ru","destinations":[{"url":"https://a.example/"}]}"#
        }
        let folder = TemporaryFolder()
        let config = folder.write("config.json", TestConfig.json(links: "[" + links.joined(separator: ",") + "]"))
        let strings = { (paths: [String]) in paths.map { "<string>https://pay.example.com\($0)</string>" }.joined() }
        let body = """
            <key>SKExternalPurchaseLink</key>
            <dict><key>de</key><string>https://pay.example.com/de/6</string></dict>
            <key>SKExternalPurchaseMultiLink</key>
            <dict>
            \t<key>de</key><array>\(strings((1...5).map { "/de/\($0)" }))</array>
            \t<key>at</key><array>\(strings((1...6).map { "/at/\($0)" }))</array>
            \t<key>ru</key><array>\(strings(["/ru", "/ru/b"]))</array>
            </dict>
            """
        try Self.expectLint(
            body, config: config, options: ["--music-streaming"], status: 1,
            lines: [
                "SKExternalPurchaseMultiLink.at: too_many_links: lists 6 URLs; at most 5",
                "SKExternalPurchaseMultiLink.de: too_many_links: 6 different links for de across both keys; at most 5",
                "SKExternalPurchaseMultiLink.ru: multiple_links_not_allowed: 2 different links for ru across both keys; music-streaming apps may list more than one only in the EU27, is and no",
            ])
    }

    @Test func allowUSAcceptsAUSLink() throws {
        let folder = TemporaryFolder()
        let config = folder.write(
            "config.json",
            TestConfig.json(links: #"[{"id":"us","path":"/us","country":"us","destinations":[{"url":"https://a.example/"}]}]"#))
        let body = "<key>SKExternalPurchaseLink</key><dict><key>us</key><string>https://pay.example.com/us</string></dict>"
        try Self.expectLint(
            body, config: config, status: 1,
            lines: [
                "SKExternalPurchaseLink.us: not_a_storefront: 'us' is not an external-purchase storefront (US links need no StoreKit key since May 2025; --allow-us accepts it)"
            ])
        try Self.expectLint(body, config: config, options: ["--allow-us"], status: 0, lines: ["FILE: OK (1 link for 1 country: us)"])
    }

    @Test func neitherKeyIsAFinding() throws {
        try Self.expectLint(
            "<key>CFBundleName</key><string>Example</string>", status: 1,
            lines: [
                "FILE: missing_keys: no SKExternalPurchaseLink or SKExternalPurchaseMultiLink key"
            ])
    }

    // MARK: Files that are not plists

    @Test func unreadableOrNonPlistFilesAreClearErrors() throws {
        let folder = TemporaryFolder()
        let cases: [(String, String)] = [
            (folder.file("absent.plist"), "error: cannot read \(folder.file("absent.plist")) (no such file)"),
            (folder.write("text.plist", "hello"), "error: \(folder.file("text.plist")) is not an XML or binary property list"),
            (
                folder.write("json.plist", #"{"SKExternalPurchaseLink": {}}"#),
                "error: \(folder.file("json.plist")) is not a property list (XML or binary)"
            ),
            (
                folder.write("broken.plist", "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key>"),
                "error: \(folder.file("broken.plist")) is not a property list (XML or binary)"
            ),
            (
                folder.write("array.plist", #"<?xml version="1.0"?><plist version="1.0"><array/></plist>"#),
                "error: \(folder.file("array.plist")): the top level must be a dictionary, not an array"
            ),
        ]
        for (file, message) in cases {
            let result = try LinkoutBinary.run(["plist", "lint", "--config", Self.shippedConfig, file])
            #expect(result.status == 1, "\(file)")
            #expect(result.stdout == "")
            #expect(result.stderr == message + "\n")
        }
        // A config that does not load is reported as check-config reports it.
        let badConfig = try LinkoutBinary.run(["plist", "lint", "--config", "/nonexistent/linkout.json", folder.file("absent.plist")])
        #expect(badConfig.status == 1)
        #expect(badConfig.stderr.contains("cannot read config /nonexistent/linkout.json"))
    }
}
