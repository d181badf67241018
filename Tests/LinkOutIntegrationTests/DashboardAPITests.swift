import Foundation
import LinkOutCore
import LinkOutStore
import LinkOutTestSupport
import Testing

@testable import LinkOutServer

/// The dashboard's JSON on the admin listener, against the real binary: real link-outs and line items in,
/// `/api/…` read back, every number checked against what the test sent.
@Suite(.serialized) struct DashboardAPITests {
    typealias Body = [String: Any]

    static let iPhone = "User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Safari/604.1"

    /// Two links: `nl` with a two-variant experiment, `de` plain; the checkout API for line items.
    final class Setup {
        let folder = TemporaryFolder()
        let apiKey: String
        let adminKey: String
        let config: String

        init(adminKeys: Bool = false, adminListen: String? = nil) {
            let made = APIKeys.newKey(name: "checkout")
            apiKey = made.key
            folder.write("api-keys", made.line + "\n")
            let admin = APIKeys.newKey(name: "operator")
            adminKey = admin.key
            folder.write("admin-keys", admin.line + "\n")
            // Ports the kernel picks unless a test names one: check-config reads the config as it is, and the
            // default ports may be served by a make run beside the suite, with another store.
            var server: [String] = [#""listen": "127.0.0.1:0""#]
            if adminKeys { server.append(#""adminKeysFile": "admin-keys""#) }
            server.append(#""adminListen": "\#(adminListen ?? "127.0.0.1:0")""#)
            config = folder.write(
                "linkout.json",
                TestConfig.json(
                    links: #"""
                        [{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://shop.example/nl" }],
                           "experiment": { "name": "price", "endsAt": "2099-01-01", "variants": [
                             { "name": "control", "url": "https://shop.example/nl?v=a" },
                             { "name": "annual", "url": "https://shop.example/nl?v=b" }] } },
                         { "id": "de", "path": "/de", "country": "de", "destinations": [{ "url": "https://shop.example/de" }] }]
                        """#,
                    extra: """
                        "api": { "listen": "127.0.0.1:0", "keysFile": "api-keys" },
                        "server": { \(server.joined(separator: ", ")) },
                        """))
        }

        func serve() throws -> GatewayProcess {
            try GatewayProcess(config: config, store: folder.file("store.sqlite"), extraArguments: ["--api-listen", "127.0.0.1:0"])
        }

        func postLineItem(_ server: GatewayProcess, id: String, line: String) throws -> Int {
            let body: Body = ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy(line)]]
            let data = try JSONSerialization.data(withJSONObject: body)
            let head =
                "POST /v1/line-items HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Authorization: Bearer \(apiKey)\r\nContent-Length: \(data.count)\r\nConnection: close\r\n\r\n"
            let connection = try HTTPConnection(port: server.apiPort)
            try connection.sendRaw(Array(head.utf8) + Array(data))
            return try connection.readResponse().status
        }
    }

    static func json(_ server: GatewayProcess, _ target: String, headers: [String] = []) throws -> (status: Int, body: Body) {
        let response = try fetch(port: server.adminPort, "GET", target, headers: headers)
        let body = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? Body ?? [:]
        return (response.status, body)
    }

    /// The sum of a series' counts, found by link and key.
    static func total(_ series: Any?, link: String, key: String) -> Int {
        let all = series as? [Body] ?? []
        guard let found = all.first(where: { $0["link"] as? String == link && $0["key"] as? String == key }) else { return 0 }
        return (found["counts"] as? [Int] ?? []).reduce(0, +)
    }

    /// What the test sent, to compare the API with.
    struct Sent {
        var variantOf: [String: String] = [:]
        var purchasers: [String: Int] = [:]
    }

    /// 20 shoppers, 3 bots, 2 prefetches and 1 HEAD on nl; 4 shoppers (2 of tokens 11 days old) and
    /// 3 refusals on de; 3 line items on nl tokens.
    static func sendTraffic(_ setup: Setup, _ server: GatewayProcess) throws -> Sent {
        var sent = Sent()
        var nlIds: [String] = []
        for _ in 0..<20 {
            let id = UUID().uuidString.lowercased()
            let response = try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id)), headers: [iPhone])
            #expect(response.status == 302)
            sent.variantOf[id] = response[header: "Location"]?.contains("v=a") == true ? "control" : "annual"
            nlIds.append(id)
        }
        for _ in 0..<3 {
            #expect(
                try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()), headers: ["User-Agent: Googlebot/2.1"]).status
                    == 302)
        }
        for _ in 0..<2 {
            #expect(
                try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()), headers: [iPhone, "Purpose: prefetch"]).status
                    == 302)
        }
        #expect(try fetch(port: server.port, "HEAD", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302)
        for age in [0, 0, 11, 11] {
            let token = TokenBuilder.minted(created: TokenBuilder.nowMs - Int64(age) * ReportingFixture.day)
            #expect(try server.get(TokenBuilder.linkOut("/de", token: token), headers: [iPhone]).status == 302)
        }
        #expect(try server.get("/de?bundleId=com.example").status == 400)
        #expect(try server.get("/de?bundleId=com.example").status == 400)
        #expect(
            try server.get(TokenBuilder.linkOut("/de", token: TokenBuilder.minted(bundleId: "com.other"), bundleId: "com.other")).status
                == 400)
        for (index, id) in nlIds.prefix(3).enumerated() {
            #expect(try setup.postLineItem(server, id: id, line: "order-\(index)") == 200)
            sent.purchasers[sent.variantOf[id]!, default: 0] += 1
        }
        return sent
    }

    /// Waits for the refusals, which ride with the writer's next batch or go on their own within a second.
    static func overview(_ server: GatewayProcess, _ query: String, refusals: Int) throws -> Body {
        let deadline = Date().addingTimeInterval(5)
        while true {
            let (status, body) = try json(server, "/api/overview?\(query)")
            #expect(status == 200)
            let data = body["data"] as? Body ?? [:]
            let seen = (data["refusals"] as? [Body] ?? []).flatMap { $0["counts"] as? [Int] ?? [] }.reduce(0, +)
            if seen >= refusals || Date() > deadline { return body }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    @Test func everyChartsNumbersAreTheTrafficSent() throws {
        let setup = Setup()
        let server = try setup.serve()
        defer { server.stop() }
        let sent = try Self.sendTraffic(setup, server)

        let overview = try Self.overview(server, "range=hour", refusals: 3)
        let data = try #require(overview["data"] as? Body)
        #expect((overview["links"] as? [Body])?.map { $0["id"] as? String } == ["nl", "de"])
        #expect(data["stepMs"] as? Int == 300_000)
        let steps = ((data["visits"] as? [Body])?.first?["counts"] as? [Int])?.count ?? 0
        #expect([12, 13].contains(steps), "an hour in 5-minute steps (13 when its start is not on a step)")
        #expect(Self.total(data["visits"], link: "nl", key: "shopper") == 20)
        #expect(Self.total(data["visits"], link: "nl", key: "bot") == 3)
        #expect(Self.total(data["visits"], link: "nl", key: "prefetch") == 2)
        #expect(Self.total(data["visits"], link: "nl", key: "head") == 1)
        #expect(Self.total(data["visits"], link: "de", key: "shopper") == 4)
        #expect(Self.total(data["refusals"], link: "de", key: "missing_token") == 2)
        #expect(Self.total(data["refusals"], link: "de", key: "unknown_app") == 1)
        let countries = (data["countries"] as? [Body] ?? []).map { "\($0["link"]!) \($0["key"]!) \($0["visits"]!)" }
        #expect(countries == ["nl nl 20", "de de 4"])
        let control = sent.variantOf.values.filter { $0 == "control" }.count
        let destinations = (data["destinations"] as? [Body] ?? []).map { "\($0["key"]!) \($0["visits"]!)" }.sorted()
        #expect(
            destinations
                == ["https://shop.example/de 4", "https://shop.example/nl?v=a \(control)", "https://shop.example/nl?v=b \(20 - control)"]
                .sorted())

        // The headline numbers: 30 visits with a token, 24 of them shoppers', and 3 of 33 link-outs refused.
        let totals = data["totals"] as? Body ?? [:]
        #expect(totals["visits"] as? Int == 30 && totals["shoppers"] as? Int == 24, "\(totals)")
        #expect(totals["refusals"] as? Int == 3 && totals["linkOuts"] as? Int == 33, "\(totals)")
        #expect(abs((totals["refusalRate"] as? Double ?? -1) - 3.0 / 33) < 1e-12)

        // One link's page: only its series, and its totals.
        let de = try #require(try Self.json(server, "/api/overview?range=hour&link=de").body["data"] as? Body)
        #expect(Set((de["visits"] as? [Body] ?? []).map { $0["link"] as? String }) == ["de"])
        let deTotals = de["totals"] as? Body ?? [:]
        #expect(deTotals["visits"] as? Int == 4 && deTotals["shoppers"] as? Int == 4 && deTotals["refusals"] as? Int == 3, "\(deTotals)")
        #expect(abs((deTotals["refusalRate"] as? Double ?? -1) - 3.0 / 7) < 1e-12)

        let experiments = try Self.json(server, "/api/experiments?range=hour")
        #expect(experiments.status == 200)
        let variants = experiments.body["variants"] as? [Body] ?? []
        #expect(variants.map { $0["variant"] as? String } == ["annual", "control"])
        for variant in variants {
            let name = variant["variant"] as! String
            let visits = name == "control" ? control : 20 - control
            let purchasers = sent.purchasers[name] ?? 0
            #expect(variant["visits"] as? Int == visits)
            #expect(variant["purchasers"] as? Int == purchasers)
            #expect((variant["revenue"] as? [String: Int] ?? [:]) == (purchasers > 0 ? ["EUR": 2470 * purchasers] : [:]))
            // The Wilson interval, computed here from its formula.
            let n = Double(visits), p = Double(purchasers) / n, z = 1.96
            let centre = (p + z * z / (2 * n)) / (1 + z * z / n)
            let margin = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)).squareRoot()
            let interval = variant["interval"] as? [String: Double] ?? [:]
            #expect(abs((interval["low"] ?? -1) - max(0, centre - margin)) < 1e-9)
            #expect(abs((interval["high"] ?? -1) - min(1, centre + margin)) < 1e-9)
        }

        let reporting = try Self.json(server, "/api/reporting")
        #expect(reporting.status == 200)
        let states = reporting.body["states"] as? [String: Int] ?? [:]
        // Every token recorded (bots' and prefetches' too) is one Apple must hear about: 26 on nl, 4 on de.
        #expect(states.values.reduce(0, +) == 30)
        #expect(states["sent"] == 0 && states["failed"] == 0)
        #expect(reporting.body["unreportedPastDay10"] as? Int == 2)
        let ages = reporting.body["ages"] as? [Body] ?? []
        #expect(ages.first { $0["day"] as? Int == 11 }?["tokens"] as? Int == 2)
        #expect(ages.first { $0["day"] as? Int == 0 }?["tokens"] as? Int == 28)
        // Production tokens past their window (the two of day 11) or with lines: due, none reported.
        #expect(reporting.body["due"] as? [String: Int] == ["tokens": 2, "reported": 0], "\(reporting.body["due"] ?? "")")
        #expect((try Self.json(server, "/api/reporter").body["refused"] as? [Body])?.isEmpty == true)

        let latest = try Self.json(server, "/api/latest?limit=5")
        let visits = latest.body["visits"] as? [Body] ?? []
        #expect(visits.count == 5)
        #expect(visits.allSatisfy { ($0["id"] as? String)?.count == 9 && ($0["id"] as? String)?.hasSuffix("…") == true }, "ids truncated")
        let full = try Self.json(server, "/api/latest?limit=1&full=1").body["visits"] as? [Body] ?? []
        #expect((full.first?["id"] as? String)?.count == 36)
        #expect((latest.body["refusals"] as? [Body] ?? []).map { $0["refusals"] as? Int ?? 0 }.reduce(0, +) == 3)

        // A custom range before the traffic is empty; a range picker preset changes the answer.
        let before = TokenBuilder.nowMs - 5 * ReportingFixture.day
        let old = try #require(try Self.json(server, "/api/overview?from=\(before)&to=\(before + 3_600_000)").body["data"] as? Body)
        #expect((old["visits"] as? [Body])?.isEmpty == true)
        let week = try #require(try Self.json(server, "/api/overview?range=week").body["data"] as? Body)
        #expect(week["stepMs"] as? Int == 3_600_000)
        #expect(Self.total(week["visits"], link: "nl", key: "shopper") == 20)
    }

    /// A query naming no range gets the last hour while everything counted is within its chart (a new
    /// install's first traffic), and the last day once anything is older; the answer names the preset.
    @Test func theDefaultRangeIsTheLastHourUntilTheStoresTrafficIsOlder() throws {
        let setup = Setup()
        var server = try setup.serve()
        let empty = try Self.json(server, "/api/overview")
        #expect(empty.status == 200 && empty.body["range"] as? String == "hour", "nothing counted yet: \(empty.body)")
        _ = try Self.sendTraffic(setup, server)
        let fresh = try Self.overview(server, "", refusals: 3)
        #expect(fresh["range"] as? String == "hour")
        #expect((fresh["data"] as? Body)?["stepMs"] as? Int == 300_000)
        #expect(Self.total((fresh["data"] as? Body)?["visits"], link: "nl", key: "shopper") == 20)
        #expect(try Self.json(server, "/api/experiments").body["range"] as? String == "hour")
        #expect(try Self.json(server, "/api/overview?range=week").body["range"] as? String == "week")
        let now = TokenBuilder.nowMs
        #expect(try Self.json(server, "/api/overview?from=\(now - 7_200_000)&to=\(now)").body.keys.contains("range") == false)
        server.stop()

        // A visit counted two hours ago (as an instance would have, written to the same store).
        let store = try SQLiteTokenStore(path: setup.folder.file("store.sqlite"))
        try store.commit([.token(TokenBuilder.record(seenAt: now - 7_200_000))])
        store.close()
        server = try setup.serve()
        defer { server.stop() }
        let older = try Self.json(server, "/api/overview")
        #expect(older.body["range"] as? String == "day")
        #expect((older.body["data"] as? Body)?["stepMs"] as? Int == 900_000)
        #expect(Self.total((older.body["data"] as? Body)?["visits"], link: "nl", key: "shopper") == 21)
        #expect(try Self.json(server, "/api/experiments").body["range"] as? String == "day")
    }

    /// The rule's edge: the hour's chart starts on a 5-minute step, and draws the bucket that starts there.
    @Test func theDefaultFollowsTheFirstBucketTheHoursChartDraws() {
        let now: Int64 = 1_800_000_000_000 + 2 * 60_000  // 2 minutes past a 5-minute step
        let chartStart = DashboardStore.Range(from: now - 3_600_000, to: now).from
        #expect(chartStart == now - 3_600_000 - 2 * 60_000)
        #expect(Dashboard.defaultPreset(firstCounted: nil, now: now) == "hour")
        #expect(Dashboard.defaultPreset(firstCounted: now - 60_000, now: now) == "hour")
        #expect(Dashboard.defaultPreset(firstCounted: chartStart, now: now) == "hour")
        #expect(Dashboard.defaultPreset(firstCounted: chartStart - 300_000, now: now) == "day")
    }

    /// Reporting's count is kept in the store: the first ask after a restart gets it at once, with the time
    /// it was made (fresh for 30 s, so no new count replaces it yet).
    @Test func theReportingCountOutlivesARestart() throws {
        let setup = Setup()
        let first = try setup.serve()
        let counted = try Self.json(first, "/api/reporting")
        first.stop()
        let at = try #require(counted.body["at"] as? Int)
        let again = try setup.serve()
        defer { again.stop() }
        let kept = try Self.json(again, "/api/reporting")
        #expect(kept.status == 200)
        #expect(kept.body["at"] as? Int == at)
        #expect(kept.body["states"] as? [String: Int] == counted.body["states"] as? [String: Int])
    }

    @Test func badQueriesGetAClear400AndOnlyTheAdminListenerServesThem() throws {
        let setup = Setup()
        let server = try setup.serve()
        defer { server.stop() }
        for (query, words) in [
            ("/api/overview?range=year", "range must be one of"),
            ("/api/overview?from=10&to=5", "from must be before to"),
            ("/api/overview?from=abc", "from must be Unix time"),
            ("/api/overview?range=day&from=1", "not both"),
            ("/api/overview?link=nowhere", "no link nowhere"),
            ("/api/experiments?link=nowhere", "no link nowhere"),
            ("/api/latest?limit=0", "limit must be from 1 to 200"),
        ] {
            let (status, body) = try Self.json(server, query)
            #expect(status == 400, "\(query)")
            #expect((body["error"] as? String)?.contains(words) == true, "\(query): \(body)")
        }
        #expect(try fetch(port: server.adminPort, "GET", "/api/nothing").status == 404)
        #expect(try fetch(port: server.adminPort, "POST", "/api/overview").status == 405)
        #expect(try server.get("/api/overview").status == 404, "the shoppers' listener has no dashboard")
        #expect(try server.get("/").status == 404)
        #expect(try fetch(port: server.adminPort, "GET", "/link/nl").status == 200)
        #expect(try fetch(port: server.adminPort, "GET", "/link/unrouted").status == 200)
        let unknown = try fetch(port: server.adminPort, "GET", "/link/nowhere")
        #expect(unknown.status == 404, "a link the config does not have: 404, as its API answers")
        #expect(unknown.bodyText.contains("its links: nl"), "\(unknown.bodyText)")
        let page = try fetch(port: server.adminPort, "GET", "/")
        #expect(page.status == 200)
        #expect(page[header: "Content-Security-Policy"]?.hasPrefix("default-src 'self'") == true)
        #expect(try fetch(port: server.adminPort, "GET", "/assets/chart.js").status == 200)
    }

    @Test func withOperatorKeysEveryPathButHealthNeedsOne() throws {
        let setup = Setup(adminKeys: true)
        let server = try setup.serve()
        defer { server.stop() }
        for path in ["/", "/link/nl", "/api/overview", "/metrics", "/assets/chart.js"] {
            let refused = try fetch(port: server.adminPort, "GET", path)
            #expect(refused.status == 401, "\(path)")
            #expect(refused[header: "WWW-Authenticate"]?.hasPrefix("Basic") == true)
        }
        #expect(try fetch(port: server.adminPort, "GET", "/api/overview", headers: ["Authorization: Bearer wrong"]).status == 401)
        #expect(
            try fetch(port: server.adminPort, "GET", "/api/overview", headers: ["Authorization: Bearer \(setup.apiKey)"]).status == 401,
            "the checkout's key is not an operator's")
        #expect(
            try fetch(port: server.adminPort, "GET", "/api/overview", headers: ["Authorization: Bearer \(setup.adminKey)"]).status == 200)
        let basic = Data("anyone:\(setup.adminKey)".utf8).base64EncodedString()
        #expect(try fetch(port: server.adminPort, "GET", "/", headers: ["Authorization: Basic \(basic)"]).status == 200)
        #expect(try fetch(port: server.adminPort, "GET", "/healthz").status == 200)
        #expect(try fetch(port: server.adminPort, "GET", "/readyz").status == 200)
    }

    @Test func checkConfigRefusesAnAdminListenerOffLoopbackWithoutKeys() throws {
        let open = Setup(adminListen: "0.0.0.0:0")
        let refused = try LinkoutBinary.run(["check-config", "--config", open.config])
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("server.adminListen: 0.0.0.0:0 is not a loopback address; set server.adminKeysFile"),
            "\(refused.stderr)")
        let keyed = Setup(adminKeys: true, adminListen: "0.0.0.0:0")
        let accepted = try LinkoutBinary.run(["check-config", "--config", keyed.config])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let loopback = Setup(adminListen: "127.0.0.1:0")
        #expect(try LinkoutBinary.run(["check-config", "--config", loopback.config]).status == 0)
    }
}
