import Testing

@testable import LinkOutCore

@Suite("PlistGenerator")
struct PlistGeneratorTests {
    static let config = PlistLinterTests.config

    static func text(_ result: Result<String, PlistGenerator.BaseURLError>) -> String? {
        try? result.get()
    }

    @Test("one link per country under SKExternalPurchaseLink, several under SKExternalPurchaseMultiLink, countries sorted")
    func fragment() {
        #expect(
            Self.text(PlistGenerator.fragment(for: Self.config, baseURL: "https://pay.example.com")) == """
                <key>SKExternalPurchaseLink</key>
                <dict>
                \t<key>fr</key>
                \t<string>https://pay.example.com/fr</string>
                \t<key>nl</key>
                \t<string>https://pay.example.com/nl</string>
                </dict>
                <key>SKExternalPurchaseMultiLink</key>
                <dict>
                \t<key>de</key>
                \t<array>
                \t\t<string>https://pay.example.com/de</string>
                \t\t<string>https://pay.example.com/de/annual</string>
                \t</array>
                </dict>

                """)
    }

    @Test("a key with no countries is left out")
    func onlySingle() {
        let config = GatewayConfig(apps: [], links: [Self.config.links[0]])
        #expect(
            Self.text(PlistGenerator.fragment(for: config, baseURL: "https://pay.example.com/")) == """
                <key>SKExternalPurchaseLink</key>
                <dict>
                \t<key>nl</key>
                \t<string>https://pay.example.com/nl</string>
                </dict>

                """)
    }

    @Test("the document wraps the keys in a plist's top-level dictionary")
    func document() {
        let config = GatewayConfig(apps: [], links: [Self.config.links[0]])
        #expect(
            Self.text(PlistGenerator.document(for: config, baseURL: "https://pay.example.com")) == """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                \t<key>SKExternalPurchaseLink</key>
                \t<dict>
                \t\t<key>nl</key>
                \t\t<string>https://pay.example.com/nl</string>
                \t</dict>
                </dict>
                </plist>

                """)
    }

    @Test("what it generates lints clean against the same config")
    func roundTrip() throws {
        let links = try PlistGenerator.links(for: Self.config, baseURL: "https://pay.example.com:8443/").get()
        #expect(PlistLinter.lint(links, config: Self.config, options: .init(musicStreaming: true)) == [])
        // Without the allowance, the two links for de are the one finding.
        #expect(PlistLinter.lint(links, config: Self.config).map(\.code) == [.multipleLinksNotAllowed])
    }

    @Test(
        "usable base URLs, normalised to https://host[:port]",
        arguments: [
            ("https://pay.example.com", "https://pay.example.com"),
            ("https://pay.example.com/", "https://pay.example.com"),
            ("https://pay.example.com:8443", "https://pay.example.com:8443"),
            ("https://[2001:db8::1]", "https://[2001:db8::1]"),
        ])
    func goodBaseURL(text: String, expected: String) throws {
        #expect(try PlistGenerator.normalizedBaseURL(text).get() == expected)
    }

    @Test(
        "unusable base URLs, each with its reason",
        arguments: [
            ("http://pay.example.com", "must start with https://"),
            ("pay.example.com", "must be an absolute https:// URL"),
            ("https://", "must be an absolute https:// URL"),
            ("https://pay.example.com?x=1", "must not have a query"),
            ("https://pay.example.com/#x", "must not have a fragment"),
            ("https://pay.example.com/linkout", "must not have a path ('/linkout')"),
            ("https://pay.example.com//", "must not have a path"),
            ("https://me@pay.example.com", "without user information"),
            ("https://pay.example.com:0", "plain host"),
            ("https://pay example.com", "printable ASCII"),
        ])
    func badBaseURL(text: String, rule: String) {
        switch PlistGenerator.normalizedBaseURL(text) {
        case .success(let base): Issue.record("accepted \(text) as \(base)")
        case .failure(let error):
            #expect(error.rule.contains(rule), "\(error)")
            #expect(error.description.hasPrefix("base URL '\(text)' "))
        }
        #expect((try? PlistGenerator.fragment(for: Self.config, baseURL: text).get()) == nil)
    }

    @Test("XML special characters are escaped")
    func escaping() {
        #expect(PlistGenerator.escape("/a&b<c>d") == "/a&amp;b&lt;c&gt;d")
        let rendered = PlistGenerator.render(ExternalPurchaseLinks(links: ["nl": "https://x.example/a&b"], multiLinks: nil))
        #expect(rendered.contains("<string>https://x.example/a&amp;b</string>"))
    }
}
