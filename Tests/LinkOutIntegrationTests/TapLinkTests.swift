import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

/// A link that expects no token (`token: "none"`, a US storefront link), against the real binary on SQLite
/// and on PostgreSQL: a shopper without a token is sent on with a 302 and no refusal, the tap is in the
/// store (committed before the 302) as an untokened visit of reason `tap`, the metrics and the dashboard
/// count it as a tap and never as a refusal, and a token that arrives on the link anyway is recorded.
@Suite(.serialized) struct TapLinkTests {
    static let links = #"""
        [{ "id": "us", "path": "/us", "country": "us", "token": "none", "app": "com.example",
           "destinations": [{ "url": "https://shop.example/us", "weight": 3 }, { "url": "https://shop-b.example/us" }],
           "parameters": { "country": true, "link": true, "passThrough": ["utm_*"] } },
         { "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://shop.example/nl" }] }]
        """#

    private func store(_ kind: String, _ folder: TemporaryFolder) throws -> String {
        guard kind == "postgres" else { return folder.file("store.sqlite") }
        let url = try PostgresServer.createDatabase()
        try #require(try LinkoutBinary.run(["store", "migrate", "--store", url]).status == 0)
        return url
    }

    /// `untokened_visits`' rows of reason `tap`, as a monthly statement would read them: (link, country,
    /// kind, seen_at), oldest first.
    private func taps(_ store: String) throws -> [(link: String, country: String, kind: String, seenAt: Int64)] {
        let sql = "SELECT link, country, kind, seen_at FROM untokened_visits WHERE reason = 'tap' ORDER BY seen_at, id"
        if store.contains("://") {
            let connection = try PostgresConnection(url: store)
            defer { connection.close() }
            let rows = try connection.execute(sql)
            return try (0..<rows.rowCount).map { (rows.text($0, 0), rows.text($0, 1), rows.text($0, 2), try rows.int64($0, 3)) }
        }
        let connection = try SQLiteConnection(path: store, readOnly: true)
        let query = try connection.prepare(sql)
        var found: [(String, String, String, Int64)] = []
        while try query.step() { found.append((query.text(0), query.text(1), query.text(2), query.int64(3))) }
        return found
    }

    @Test(arguments: ["sqlite", "postgres"])
    func aTapIsSentOnRecordedAndCountedAsATapNeverARefusal(store kind: String) throws {
        let folder = TemporaryFolder()
        let store = try store(kind, folder)
        let config = folder.write("config.json", TestConfig.json(links: Self.links))
        let server = try GatewayProcess(config: config, store: store)
        let before = TokenBuilder.nowMs

        let tapped = try server.get("/us?utm_source=mail", headers: [DashboardAPITests.iPhone])
        #expect(tapped.status == 302)
        let location = try #require(tapped[header: "Location"])
        #expect(["https://shop.example/us?", "https://shop-b.example/us?"].contains { location.hasPrefix($0) }, "\(location)")
        #expect(location.hasSuffix("country=us&link=us&utm_source=mail"), "\(location)")
        #expect(!location.contains("externalPurchaseId") && tapped[header: "X-Linkout-Reason"] == nil)
        // Strict durability: the tap is in the store once its 302 is out.
        let committed = try taps(store)
        #expect(committed.count == 1)
        #expect(committed.first?.link == "us" && committed.first?.country == "us" && committed.first?.kind == "shopper")
        #expect((before...TokenBuilder.nowMs).contains(committed.first?.seenAt ?? 0))
        // The same shopper again: the same destination, as a token keeps its own.
        let again = try server.get("/us", headers: [DashboardAPITests.iPhone])
        #expect(again.status == 302 && again[header: "Location"]?.split(separator: "?").first == location.split(separator: "?").first)
        #expect(try fetch(port: server.port, "HEAD", "/us").status == 302)

        // A token on the link anyway is handled as on any link: a valid one recorded, a damaged one refused.
        let id = UUID().uuidString.lowercased()
        let withToken = try server.get(TokenBuilder.linkOut("/us", token: TokenBuilder.minted(id: id)), headers: [DashboardAPITests.iPhone])
        #expect(withToken.status == 302)
        #expect(withToken[header: "Location"]?.contains("externalPurchaseId=\(id)") == true)
        #expect(try server.get("/us?externalPurchaseToken=!!!!&bundleId=com.example").status == 400)
        // A link that requires a token still refuses a request without one.
        #expect(try server.get("/nl?bundleId=com.example").status == 400)

        let samples = MetricsTests.parse(try fetch(port: server.adminPort, "GET", "/metrics").bodyText)
        #expect(samples[#"linkout_link_requests_total{link="us",outcome="tap"}"#] == 3)
        #expect(samples[#"linkout_link_requests_total{link="us",outcome="redirect"}"#] == 1)
        #expect(samples[#"linkout_link_requests_total{link="us",outcome="rejected"}"#] == 1)
        #expect(samples[#"linkout_rejections_total{link="us",reason="missing_token"}"#] == 0)
        #expect(samples[#"linkout_rejections_total{link="us",reason="token_not_base64"}"#] == 1)
        #expect(samples[#"linkout_rejections_total{link="nl",reason="missing_token"}"#] == 1)
        #expect(samples[#"linkout_visits_total{link="us",kind="shopper"}"#] == 3)
        #expect(samples[#"linkout_visits_total{link="us",kind="head"}"#] == 1)
        let redirects = [
            #"linkout_redirects_total{link="us",destination="https://shop.example/us"}"#,
            #"linkout_redirects_total{link="us",destination="https://shop-b.example/us"}"#,
        ]
        #expect(redirects.compactMap { samples[$0] }.reduce(0, +) == 4)

        // The dashboard: two taps (the shopper's) of their own kind on us and the HEAD apart, as the statement
        // counts them; the refusals are us's damaged token and nl's.
        let overview = try DashboardAPITests.overview(server, "range=hour", refusals: 2)
        let data = try #require(overview["data"] as? [String: Any])
        #expect(DashboardAPITests.total(data["visits"], link: "us", key: "tap") == 2)
        #expect(DashboardAPITests.total(data["visits"], link: "us", key: "tap-bot") == 1)
        #expect(DashboardAPITests.total(data["visits"], link: "us", key: "shopper") == 1)
        #expect(DashboardAPITests.total(data["visits"], link: "us", key: "untokened") == 0)
        #expect(DashboardAPITests.total(data["refusals"], link: "us", key: "token_not_base64") == 1)
        #expect(DashboardAPITests.total(data["refusals"], link: "us", key: "missing_token") == 0)
        let totals = try #require(data["totals"] as? [String: Any])
        #expect(
            totals["taps"] as? Int == 2 && totals["botTaps"] as? Int == 1 && totals["visits"] as? Int == 1
                && totals["refusals"] as? Int == 2, "\(totals)")
        #expect(totals["linkOuts"] as? Int == 6)
        #expect(server.stop() == 0)

        let recorded = try taps(store)
        #expect(recorded.map(\.kind) == ["shopper", "shopper", "head"])
        #expect(recorded.allSatisfy { $0.link == "us" && $0.country == "us" })
        let tokens = try exportTokens(store: store)
        #expect(tokens.map { $0["externalPurchaseId"] as? String } == [id])
        #expect(tokens.first?["link"] as? String == "us")

        // The month's statement counts the taps (not the HEAD), as the dashboard does, under the link's app
        // (beside its token of the link), by the link's country.
        let statement = try LinkoutBinary.run([
            "statement", "--config", config, "--store", store, "--month", "\(UTCMonth(containing: before))", "--format", "json",
        ])
        #expect(statement.status == 0, "\(statement.stderr)")
        let rows =
            (try JSONSerialization.jsonObject(with: Data(statement.stdout.utf8)) as? [String: Any])?["rows"] as? [[String: Any]] ?? []
        let tapRow = rows.first { ($0["taps"] as? Int ?? 0) > 0 }
        #expect(tapRow?["bundleId"] as? String == "com.example" && tapRow?["kind"] as? String == "linkOut", "\(rows)")
        #expect(tapRow?["taps"] as? Int == 2 && tapRow?["tokens"] as? Int == 1, "\(rows)")
        #expect(!rows.contains { $0["bundleId"] as? String == "" }, "no row of no app: the link names its app")
        #expect((totals["taps"] as? Int) == tapRow?["taps"] as? Int, "the dashboard's taps are the statement's")
    }

    @Test func checkConfigNamesABadTokenValue() throws {
        let folder = TemporaryFolder()
        let config = folder.write(
            "config.json", TestConfig.json(links: Self.links.replacingOccurrences(of: #""token": "none""#, with: #""token": "optional""#)))
        let checked = try LinkoutBinary.run(["check-config", "--config", config, "--rules-only"])
        #expect(checked.status == 1)
        #expect(checked.stderr.contains("links[0].token: must be 'required' (StoreKit appends a token) or 'none'"), "\(checked.stderr)")
    }
}
