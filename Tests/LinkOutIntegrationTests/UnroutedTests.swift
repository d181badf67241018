import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// A valid token on a path no link serves (`/nl/` or `/NL` for a link at `/nl`): the shopper gets the 404
/// page, or is sent on through `unrouted.redirectTo`'s link, and the token is recorded as link `unrouted`
/// with its path, counted, logged once per path per minute, and exported. On SQLite and on PostgreSQL.
@Suite(.serialized) struct UnroutedTests {
    private func store(_ kind: String, _ folder: TemporaryFolder) throws -> String {
        guard kind == "postgres" else { return folder.file("store.sqlite") }
        let url = try PostgresServer.createDatabase()
        try #require(try LinkoutBinary.run(["store", "migrate", "--store", url]).status == 0)
        return url
    }

    private func exported(_ store: String) throws -> [String: [String: Any]] {
        var byId: [String: [String: Any]] = [:]
        for token in try exportTokens(store: store) { byId[token["externalPurchaseId"] as? String ?? ""] = token }
        return byId
    }

    @Test(arguments: ["sqlite", "postgres"])
    func aValidTokenOnAnUnknownPathIsRecordedCountedAndLoggedAndGets404(store kind: String) throws {
        let folder = TemporaryFolder()
        let store = try store(kind, folder)
        let config = folder.write("config.json", TestConfig.json(links: PostgresTests.links))
        let server = try GatewayProcess(config: config, store: store)
        let page = try ShopperPages.catalog().page(.notFound, language: ShopperLanguage.english)
        let slash = UUID().uuidString.lowercased(), upper = UUID().uuidString.lowercased()

        let first = try server.get(TokenBuilder.linkOut("/nl/", token: TokenBuilder.minted(id: slash)))
        #expect(first.status == 404)
        #expect(first.body == page)
        #expect(first[header: "location"] == nil)
        #expect(try server.get(TokenBuilder.linkOut("/nl/", token: TokenBuilder.minted(id: slash))).status == 404)
        #expect(try server.get(TokenBuilder.linkOut("/NL", token: TokenBuilder.minted(id: upper))).status == 404)
        #expect(try fetch(port: server.port, "HEAD", TokenBuilder.linkOut("/NL", token: TokenBuilder.minted(id: upper))).status == 404)
        // No valid token, nothing to record: a plain 404.
        let refused = UUID().uuidString.lowercased()
        #expect(try server.get(TokenBuilder.linkOut("/nl/", token: TokenBuilder.minted(id: refused, appAppleId: 7))).status == 404)
        #expect(try server.get("/nl/?externalPurchaseToken=junk&bundleId=com.example").status == 404)

        let samples = MetricsTests.parse(try fetch(port: server.adminPort, "GET", "/metrics").bodyText)
        #expect(samples["linkout_unrouted_tokens_total"] == 4)
        let access = server.accessLog(atLeast: 6)
        #expect(access.filter { $0["route"] as? String == "unrouted" && $0["status"] as? Int == 404 }.count == 4)
        #expect(server.stop() == 0)

        // Logged once per path per minute, with the path.
        let logLines = server.log.split(separator: "\n").filter { $0.contains("no link serves") }
        #expect(logLines.count == 2, "\(logLines)")
        #expect(logLines.contains { $0.contains("/nl/") } && logLines.contains { $0.contains("/NL") })

        let tokens = try exported(store)
        #expect(tokens[refused] == nil)
        #expect(tokens.count == 2)
        let a = try #require(tokens[slash]), b = try #require(tokens[upper])
        #expect(a["link"] as? String == "unrouted" && a["path"] as? String == "/nl/" && a["hits"] as? Int == 2)
        #expect(a["destination"] as? String == "" && a["country"] as? String == "")
        #expect(b["link"] as? String == "unrouted" && b["path"] as? String == "/NL")
        #expect(b["hits"] as? Int == 1 && b["otherVisits"] as? Int == 1)
    }

    @Test(arguments: ["sqlite", "postgres"])
    func withRedirectToTheShopperIsSentOnThroughThatLinkAndTheTokenIsFlagged(store kind: String) throws {
        let folder = TemporaryFolder()
        let store = try store(kind, folder)
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: PostgresTests.links, extra: #""unrouted": { "redirectTo": "nl" },"#))
        let server = try GatewayProcess(config: config, store: store)
        let stray = UUID().uuidString.lowercased(), direct = UUID().uuidString.lowercased()
        let sent = try server.get(TokenBuilder.linkOut("/nl/", token: TokenBuilder.minted(id: stray)))
        #expect(sent.status == 302)
        let location = try #require(sent[header: "location"])
        #expect(location.contains("externalPurchaseId=\(stray)"))
        #expect(try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: direct))).status == 302)
        let samples = MetricsTests.parse(try fetch(port: server.adminPort, "GET", "/metrics").bodyText)
        #expect(samples["linkout_unrouted_tokens_total"] == 1)
        #expect(server.stop() == 0)

        let tokens = try exported(store)
        let flagged = try #require(tokens[stray]), plain = try #require(tokens[direct])
        #expect(flagged["link"] as? String == "unrouted" && flagged["path"] as? String == "/nl/")
        #expect(location.hasPrefix(flagged["destination"] as? String ?? "-"))
        #expect(flagged["country"] as? String == "nl")
        #expect(plain["link"] as? String == "nl" && plain["path"] == nil)
    }

    @Test func aRedirectToNamingNoLinkIsRefused() throws {
        let folder = TemporaryFolder()
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: PostgresTests.links, extra: #""unrouted": { "redirectTo": "xx" },"#))
        let checked = try LinkoutBinary.run(["check-config", "--config", config])
        #expect(checked.status == 1)
        #expect(
            checked.stdout.contains("unrouted.redirectTo: must be the id of a link")
                || checked.stderr.contains("unrouted.redirectTo: must be the id of a link"))
    }
}
