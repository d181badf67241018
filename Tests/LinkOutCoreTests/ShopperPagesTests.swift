import Foundation
import LinkOutTestSupport
import Testing

@testable import LinkOutCore

private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

private func language(_ code: String) -> Int { ShopperLanguage.index(of: code)! }

private func builtIn(_ settings: PageSettings = PageSettings(), overrides: [String: [UInt8]] = [:]) -> Result<PageCatalog, PageCatalogError>
{
    PageCatalog.render(
        template: BuiltInPages.files["page.html"]!, messages: { BuiltInPages.files["messages/\($0).json"].map { Array($0.utf8) } },
        settings: settings, overrides: overrides)
}

@Suite("Shopper language")
struct ShopperLanguageTests {
    @Test func theStorefrontLanguagesAreAllThere() {
        let eu = [
            "bg", "cs", "da", "de", "el", "en", "es", "et", "fi", "fr", "ga", "hr", "hu", "it", "lt", "lv", "mt", "nl", "pl", "pt", "ro",
            "sk", "sl", "sv",
        ]
        #expect(Set(ShopperLanguage.codes) == Set(eu + ["is", "no", "ru"]))
        #expect(ShopperLanguage.codes == ShopperLanguage.codes.sorted())
    }

    @Test(arguments: [
        ("nl-NL", "nl"), ("nl-NL,nl;q=0.9,en-US;q=0.8,en;q=0.7", "nl"), ("en-US,en;q=0.9,nl;q=0.8", "en"),
        ("ja,de;q=0.5", "de"), ("de;q=0.5,fr;q=0.8", "fr"), ("fr;q=0.8,de;q=0.8", "fr"), ("nb-NO", "no"), ("nn", "no"),
        ("NL-be", "nl"), (" pt-PT ; q=1 , en;q=0.1", "pt"), ("el-GR,en;q=0.5", "el"), ("ga-IE", "ga"), ("ru", "ru"),
        ("de;q=0,fr;q=0.1", "fr"), ("de;q=2,it", "it"), ("de;q=abc,sv", "sv"), ("de;level=1,fi", "fi"),
    ])
    func acceptLanguageChoosesOursByWeight(header: String, expected: String) {
        #expect(ShopperLanguage.preferred(acceptLanguage: header) == language(expected), "\(header)")
    }

    @Test(arguments: ["", "*", "ja,zh;q=0.9", "de;q=0", ",,,", "q=1", "x-klingon"])
    func noneOfOursIsNoChoice(header: String) {
        #expect(ShopperLanguage.preferred(acceptLanguage: header) == nil, "\(header)")
    }

    @Test func aHostileHeaderIsReadOnlyThirtyTwoEntriesDeep() {
        let header = Array(repeating: "xx", count: 40).joined(separator: ",") + ",nl"
        #expect(ShopperLanguage.preferred(acceptLanguage: header) == nil)
    }

    @Test func theBrowserFirstThenTheLinksCountryThenEnglish() {
        #expect(ShopperLanguage.choose(acceptLanguage: "nl-NL", country: "de") == language("nl"))
        #expect(ShopperLanguage.choose(acceptLanguage: "ja", country: "at") == language("de"))
        #expect(ShopperLanguage.choose(acceptLanguage: nil, country: "se") == language("sv"))
        #expect(ShopperLanguage.choose(acceptLanguage: nil, country: "us") == language("en"))
        #expect(ShopperLanguage.choose(acceptLanguage: nil, country: nil) == language("en"))
        // Every EU, EEA and Russian storefront has a language of its own pages.
        for country in [
            "at", "be", "bg", "cy", "cz", "de", "dk", "ee", "es", "fi", "fr", "gr", "hr", "hu", "ie", "it", "lt",
            "lu", "lv", "mt", "nl", "pl", "pt", "ro", "se", "si", "sk", "is", "li", "no", "ru",
        ] {
            #expect(ShopperLanguage.forCountry(country) != nil, "\(country)")
        }
    }
}

@Suite("Shopper pages")
struct ShopperPagesTests {
    @Test func theBuiltInCopyIsPublic() throws {
        let public_ = packageRoot.appendingPathComponent("Public")
        var onDisk: [String: String] = [:]
        onDisk["page.html"] = try String(contentsOf: public_.appendingPathComponent("page.html"), encoding: .utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: public_.appendingPathComponent("messages").path) {
            onDisk["messages/" + name] = try String(contentsOf: public_.appendingPathComponent("messages/" + name), encoding: .utf8)
        }
        #expect(onDisk.keys.sorted() == BuiltInPages.files.keys.sorted(), "run scripts/embed-pages")
        for (name, text) in onDisk { #expect(BuiltInPages.files[name] == text, "\(name) differs from Public/: run scripts/embed-pages") }
    }

    @Test func everyRefusalFamilyHasItsOwnWordsInEveryLanguage() throws {
        let catalog = try builtIn().get()
        let families: [PageKind] = [.missingToken, .damagedToken, .expiredToken, .unknownApp]
        #expect(Set(RejectReason.allCases.map(PageKind.refusal)) == Set(families))
        #expect(PageKind.refusal(.missingToken) == .missingToken)
        #expect(PageKind.refusal(.expired) == .expiredToken)
        #expect(PageKind.refusal(.unknownApp) == .unknownApp)
        #expect(PageKind.refusal(.tokenNotBase64) == .damagedToken)
        for (index, code) in ShopperLanguage.codes.enumerated() {
            let headings = PageKind.allCases.map { catalog.heading($0, language: index) }
            #expect(Set(headings).count == headings.count, "\(code): two pages share a heading")
            if code != "en" {
                let english = PageKind.allCases.map { catalog.heading($0, language: ShopperLanguage.english) }
                #expect(headings != english, "\(code) reads English")
            }
        }
        #expect(catalog.heading(.missingToken, language: language("nl")) == "Deze link is onvolledig")
    }

    /// Every page of every language, rendered plain and with a brand and support link, is valid HTML
    /// whose `lang` is its language (scripts/check-html, with html5lib where installed).
    @Test func everyPageIsValidHTMLInItsLanguage() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = try builtIn().get()
        let branded = try builtIn(PageSettings(brandName: "Fjord & Co <Shop>", supportURL: "https://help.example.com/?a=1&b=\"2\"")).get()
        for (index, code) in ShopperLanguage.codes.enumerated() {
            let dir = folder.appendingPathComponent(code)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for kind in PageKind.allCases {
                try Data(plain.page(kind, language: index)).write(to: dir.appendingPathComponent("\(kind.rawValue).html"))
                try Data(branded.page(kind, language: index)).write(to: dir.appendingPathComponent("branded-\(kind.rawValue).html"))
            }
        }
        let result = try Command.python([packageRoot.appendingPathComponent("scripts/check-html").path, folder.path])
        let text = result.stdoutText
        #expect(result.status == 0, "\(text)\(result.stderr)")
        // The whole line: a run without html5lib (balanced tags only) says so after it and must not pass.
        #expect(
            text.split(separator: "\n").contains("html: \(ShopperLanguage.codes.count * PageKind.allCases.count * 2) passed, 0 failed"),
            "\(text)")
    }

    @Test func brandAndSupportLinkAreEscapedAndWordedInTheLanguage() throws {
        let catalog = try builtIn(PageSettings(brandName: "Fjord & Co", supportURL: "https://help.example.com/?a=1&b=2")).get()
        let dutch = String(decoding: catalog.page(.missingToken, language: language("nl")), as: UTF8.self)
        #expect(dutch.contains("<p class=\"brand\">Fjord &amp; Co</p>"))
        #expect(dutch.contains("<title>Deze link is onvolledig · Fjord &amp; Co</title>"))
        #expect(dutch.contains("<a href=\"https://help.example.com/?a=1&amp;b=2\">Contact opnemen met de klantenservice</a>"))
        let plain = String(decoding: try builtIn().get().page(.missingToken, language: language("nl")), as: UTF8.self)
        #expect(!plain.contains("brand\">") && !plain.contains("<a "))
        #expect(!plain.contains("{{"))
    }

    @Test func anOperatorsPageReplacesOneLanguagesPage() throws {
        let own = Array("<!doctype html><html lang=\"de\"><title>x</title>eigene</html>".utf8)
        let catalog = try builtIn(overrides: ["de/404": own, "fr/400": own]).get()
        #expect(catalog.page(.notFound, language: language("de")) == own)
        #expect(catalog.page(.notFound, language: language("nl")) != own)
        for family in [PageKind.missingToken, .damagedToken, .expiredToken, .unknownApp] {
            #expect(catalog.page(family, language: language("fr")) == own, "fr/400 stands for every 400 family")
        }
        let specific = try builtIn(overrides: ["fr/400": own, "fr/400-expired-token": [1]]).get()
        #expect(specific.page(.expiredToken, language: language("fr")) == [1])
        #expect(specific.page(.missingToken, language: language("fr")) == own)
    }

    @Test func badOverridesAndTablesAreNamed() {
        #expect(
            throws: PageCatalogError(
                file: "xx/404.html",
                problem:
                    "is not a page linkout serves: use <lang>/<page>.html with lang one of \(ShopperLanguage.codes.joined(separator: " ")) and page one of 400-missing-token 400-damaged-token 400-expired-token 400-unknown-app 404 405 429 503 400"
            )
        ) {
            try builtIn(overrides: ["xx/404": []]).get()
        }
        #expect(
            throws: PageCatalogError(
                file: "de/410.html",
                problem:
                    "is not a page linkout serves: use <lang>/<page>.html with lang one of \(ShopperLanguage.codes.joined(separator: " ")) and page one of 400-missing-token 400-damaged-token 400-expired-token 400-unknown-app 404 405 429 503 400"
            )
        ) {
            try builtIn(overrides: ["de/410": []]).get()
        }
        let missing = PageCatalog.render(
            template: BuiltInPages.files["page.html"]!,
            messages: { $0 == "ru" ? nil : BuiltInPages.files["messages/\($0).json"].map { Array($0.utf8) } })
        #expect(throws: PageCatalogError(file: "messages/ru.json", problem: "is missing")) { try missing.get() }
        let short = PageCatalog.render(
            template: BuiltInPages.files["page.html"]!, messages: { _ in Array(#"{"language":"x","support":"y"}"#.utf8) })
        #expect(throws: PageCatalogError(file: "messages/bg.json", problem: "has no 400-missing-token")) { try short.get() }
        let noLang = PageCatalog.render(
            template: "<html>{{heading}}{{text}}", messages: { BuiltInPages.files["messages/\($0).json"].map { Array($0.utf8) } })
        #expect(throws: PageCatalogError(file: "page.html", problem: "has no {{lang}}")) { try noLang.get() }
    }

    @Test func theConfigsPagesKeysAreChecked() {
        func load(_ pages: String) -> Result<GatewayConfig, ConfigError> {
            ConfigLoader.load(json: Array(ConfigLoaderTests.config(extra: #""pages":\#(pages)"#).utf8), baseDirectory: "/etc/linkout")
        }
        let good = try? load(#"{"brandName":"Fjord","supportURL":"mailto:help@example.com","overrides":"pages"}"#).get()
        #expect(
            good?.pages == PageSettings(brandName: "Fjord", supportURL: "mailto:help@example.com", overridesDirectory: "/etc/linkout/pages")
        )
        for (pages, key) in [
            (#"{"brandName":""}"#, "pages.brandName"), (#"{"supportURL":"http://help.example.com"}"#, "pages.supportURL"),
            (#"{"supportURL":"javascript:alert(1)"}"#, "pages.supportURL"),
            (#"{"supportURL":"https://a.example.com/\"x"}"#, "pages.supportURL"),
            (#"{"overrides":""}"#, "pages.overrides"), (#"{"brand":"x"}"#, "pages.brand"), (#""x""#, "pages"),
        ] {
            guard case .failure(let error) = load(pages) else {
                Issue.record("\(pages) accepted")
                continue
            }
            #expect(error.problems.map(\.key) == [key], "\(pages): \(error.problems)")
        }
    }
}
