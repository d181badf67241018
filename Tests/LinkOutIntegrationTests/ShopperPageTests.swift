import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// The pages a shopper reads, over real HTTP: in their browser's language (else the link's country's,
/// else English), one page per refusal family, the operator's brand, support link and own pages, and
/// small cacheable answers for what browsers and crawlers ask for by themselves.
@Suite struct ShopperPageTests {
    static let nl = ShopperLanguage.index(of: "nl")!

    /// One server for every language: each gets its own page for a missing token, an unknown path and a
    /// refused token, with the headers a cache needs.
    @Test func everyLanguageGetsItsOwnPages() throws {
        let server = try GatewayProcess.start()
        let pages = try ShopperPages.catalog()
        for (index, code) in ShopperLanguage.codes.enumerated() {
            for (target, kind) in [
                ("/nl?bundleId=com.example", PageKind.missingToken),
                ("/nl?externalPurchaseToken=abc*def&bundleId=com.example", .damagedToken),
                ("/nowhere", .notFound),
            ] {
                let response = try server.get(target, headers: ["Accept-Language: \(code)-XX,en;q=0.5"])
                #expect(response.status == kind.status, "\(code) \(target)")
                #expect(response[header: "Content-Language"] == code, "\(code) \(target)")
                #expect(response[header: "Vary"] == "Accept-Language")
                #expect(response.body == pages.page(kind, language: index), "\(code) \(target)")
                #expect(response.bodyText.contains("<html lang=\"\(code)\">"))
                #expect(
                    response.bodyText.contains("<h1>\(pages.heading(kind, language: index))</h1>")
                        || pages.heading(kind, language: index).contains("&"))
            }
        }
    }

    /// The issue's own case: a Dutch browser on /nl with no token reads Dutch; with no Accept-Language the
    /// link's country decides; a language we have no pages in falls back to the country, then English.
    @Test func aDutchBrowserOnNlWithAMissingTokenReadsDutch() throws {
        let server = try GatewayProcess.start()
        let dutch = try server.get("/nl?bundleId=com.example", headers: ["Accept-Language: nl-NL,nl;q=0.9,en;q=0.8"])
        #expect(dutch.status == 400)
        #expect(dutch.bodyText.contains("Deze link is onvolledig"))
        #expect(dutch[header: "Content-Language"] == "nl")
        #expect(!dutch.bodyText.contains("expired") && !dutch.bodyText.contains("verlopen"), "a missing token is not 'expired'")
        #expect(try server.get("/de?bundleId=com.example")[header: "Content-Language"] == "de")
        #expect(try server.get("/fr?bundleId=com.example", headers: ["Accept-Language: ja"])[header: "Content-Language"] == "fr")
        #expect(try server.get("/nowhere", headers: ["Accept-Language: ja"])[header: "Content-Language"] == "en")
        #expect(try server.get("/nl?bundleId=com.example", headers: ["Accept-Language: nb-NO"])[header: "Content-Language"] == "no")
    }

    @Test func eachRefusalFamilyReadsDifferently() throws {
        let server = try GatewayProcess.start()
        let now = TokenBuilder.nowMs
        let english = ["Accept-Language: en"]
        let missing = try server.get("/nl?bundleId=com.example", headers: english)
        let damaged = try server.get("/nl?externalPurchaseToken=abc*def&bundleId=com.example", headers: english)
        let expired = try server.get(
            TokenBuilder.linkOut(token: TokenBuilder.minted(created: now - 7_200_000, type: .services, expiration: now - 3_600_000)),
            headers: english)
        let unknown = try server.get(
            TokenBuilder.linkOut(token: TokenBuilder.minted(bundleId: "com.other"), bundleId: "com.other"), headers: english)
        #expect(missing.bodyText.contains("This link is incomplete"))
        #expect(damaged.bodyText.contains("This link couldn’t be read"))
        #expect(expired.bodyText.contains("This link has expired"))
        #expect(unknown.bodyText.contains("This app isn’t set up here"))
        #expect(Set([missing.body, damaged.body, expired.body, unknown.body]).count == 4)
        // Nothing from the request comes back in a page.
        #expect(!unknown.bodyText.contains("com.other"))
    }

    @Test func faviconAndRobotsGetSmallCacheableAnswers() throws {
        let server = try GatewayProcess.start()
        let favicon = try server.get("/favicon.ico")
        #expect(favicon.status == 204)
        #expect(favicon.body.isEmpty)
        #expect(favicon[header: "Cache-Control"] == "public, max-age=86400")
        let robots = try server.get("/robots.txt")
        #expect(robots.status == 200)
        #expect(robots.bodyText == "User-agent: *\nDisallow: /\n")
        #expect(robots[header: "Content-Type"] == "text/plain; charset=utf-8")
        #expect(robots[header: "Cache-Control"] == "public, max-age=86400")
    }

    /// The config's brand name and support link appear on every page in its language; an operator's own
    /// page replaces one language's; a config without publicDir serves the same pages, built in.
    @Test func operatorsBrandSupportLinkAndOwnPages() throws {
        let folder = TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.file("own/de"), withIntermediateDirectories: true)
        let own = "<!doctype html><html lang=\"de\"><head><title>Hier nicht</title></head><body><h1>Hier nicht</h1></body></html>\n"
        folder.write("own/de/404.html", own)
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: #"[{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/x" }] }]"#,
                extra: #""pages": { "brandName": "Fjord", "supportURL": "https://help.example.com", "overrides": "own" },"#))
        let server = try GatewayProcess(config: config, store: folder.file("store.sqlite"))
        let settings = PageSettings(brandName: "Fjord", supportURL: "https://help.example.com")
        let branded = try ShopperPages.catalog(settings)
        let dutch = try server.get("/nl?bundleId=com.example")
        #expect(dutch.body == branded.page(.missingToken, language: Self.nl))
        #expect(dutch.bodyText.contains(">Contact opnemen met de klantenservice</a>"))
        #expect(try server.get("/x", headers: ["Accept-Language: de"]).bodyText == own)
        #expect(
            try server.get("/x", headers: ["Accept-Language: fr"]).body
                == branded.page(.notFound, language: ShopperLanguage.index(of: "fr")!))

        // No publicDir: the binary's own copy of Public/, the very same pages.
        let plain = folder.write(
            "plain.json",
            TestConfig.json(links: PostgresTests.links)
                .replacingOccurrences(of: #""publicDir": "\#(LinkoutBinary.packageRoot.path)/Public","#, with: ""))
        #expect(!plain.isEmpty)
        let builtIn = try GatewayProcess(config: plain, store: folder.file("plain.sqlite"))
        #expect(try builtIn.get("/nl?bundleId=com.example").body == ShopperPages.catalog().page(.missingToken, language: Self.nl))
    }

    /// The dashboard's pages are not built in: without publicDir they are read beside the binary, from
    /// the clone's Public/admin here (the package's /usr/share/linkout/Public/admin once installed), so a
    /// config needs no publicDir for them, wherever it is.
    @Test func withoutPublicDirTheDashboardsPagesAreTheOnesBesideTheBinary() throws {
        let folder = TemporaryFolder()
        let plain = folder.write(
            "plain.json",
            TestConfig.json(links: PostgresTests.links)
                .replacingOccurrences(of: #""publicDir": "\#(LinkoutBinary.packageRoot.path)/Public","#, with: ""))
        #expect(!(try String(contentsOfFile: plain, encoding: .utf8)).contains("publicDir"))
        let server = try GatewayProcess(config: plain, store: folder.file("plain.sqlite"))
        let page = try HTTPConnection(port: server.adminPort).request("GET", "/")
        #expect(page.status == 200, "\(page.bodyText)")
        #expect(page.body == Array(try Data(contentsOf: LinkoutBinary.packageRoot.appendingPathComponent("Public/admin/dashboard.html"))))
    }
}
