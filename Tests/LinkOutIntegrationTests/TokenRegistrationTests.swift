import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// An app's backend hands over the tokens it got from StoreKit (`POST /v1/tokens`, `tokens import`): a
/// custom-link token that never passes a link is recorded, once, and reported like a link's.
@Suite(.serialized) struct TokenRegistrationTests {
    typealias Body = [String: Any]

    static func results(_ json: Body) -> [Body] { json["tokens"] as? [Body] ?? [] }

    /// A custom-link token as Japan's apps mint them, created `ageDays` ago.
    static func inAppToken(id: String = UUID().uuidString.lowercased(), ageDays: Double = 0) -> String {
        let created = TokenBuilder.nowMs - Int64(ageDays * 86_400_000)
        return TokenBuilder.minted(id: id, created: created, type: TokenType(rawValue: "IN_APP"), expiration: created + 30 * 86_400_000)
    }

    @Test func oneTokenIsRecordedOnceAndReportedLikeALinksToken() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        let id = UUID().uuidString.lowercased()
        let body: Body = ["token": Self.inAppToken(id: id, ageDays: 4), "bundleId": "com.example", "country": "JP"]
        let first = try fixture.post(server, body, path: "/v1/tokens")
        #expect(first.status == 200, "\(first.json)")
        #expect(Self.results(first.json).first?["result"] as? String == "recorded")
        #expect(Self.results(first.json).first?["externalPurchaseId"] as? String == id)
        // A retry after a lost answer adds nothing.
        let again = try fixture.post(server, body, path: "/v1/tokens")
        #expect(again.status == 200 && Self.results(again.json).first?["result"] as? String == "unchanged", "\(again.json)")
        // Without a key: nothing.
        #expect(try fixture.post(server, body, authorization: "", path: "/v1/tokens").status == 401)
        server.stop()

        let export = try LinkoutBinary.run(["tokens", "export", "--config", fixture.recordOnlyConfigPath, "--format", "jsonl"])
        let rows = export.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? Body }
        #expect(rows.count == 1, "\(export.stdout)")
        let row = try #require(rows.first)
        #expect(row["externalPurchaseId"] as? String == id && row["link"] as? String == "registered" && row["country"] as? String == "jp")
        #expect(row["hits"] as? Int == 0, "a registration is never a shopper")
        #expect(row["tokenType"] as? String == "IN_APP")

        // Four days old and nothing bought: NO_LINE_ITEM, once.
        #expect(try fixture.report().stdout.contains("1 accepted"))
        let accepted = try fixture.production.accepted()
        #expect(accepted.map { $0["externalPurchaseId"] as? String } == [id] && accepted.first?["status"] as? String == "NO_LINE_ITEM")
        #expect(try fixture.report().stdout.contains("0 planned"))
    }

    /// `linkout_visits_total{link="registered",kind="registered"}` counts what registrations hand to the
    /// writer, as a link's visits count: each new token once; one sent again (already recorded) or refused
    /// adds nothing. No link carries a `registered` series of zeros.
    @Test func registeredTokensCountInTheVisitsMetric() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        defer { server.stop() }
        let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }
        let one: Body = ["token": Self.inAppToken(id: ids[0]), "bundleId": "com.example"]
        #expect(try fixture.post(server, one, path: "/v1/tokens").status == 200)
        #expect(try fixture.post(server, one, path: "/v1/tokens").status == 200, "sent again: unchanged")
        let batch: Body = [
            "tokens": [
                ["token": Self.inAppToken(id: ids[1]), "bundleId": "com.example"],
                ["token": Self.inAppToken(id: ids[0]), "bundleId": "com.example"],
                ["token": Self.inAppToken(id: ids[2]), "bundleId": "com.example"],
                ["token": Self.inAppToken(id: ids[2]), "bundleId": "com.example"],
                ["token": "not a token", "bundleId": "com.example"],
            ]
        ]
        let answer = try fixture.post(server, batch, path: "/v1/tokens")
        #expect(
            Self.results(answer.json).map { $0["result"] as? String } == ["recorded", "unchanged", "recorded", "unchanged", "refused"],
            "\(answer.json)")
        try fixture.linkOut(server)

        let metrics = try fetch(port: server.adminPort, "GET", "/metrics")
        let samples = MetricsTests.parse(metrics.bodyText)
        #expect(samples[#"linkout_visits_total{link="registered",kind="registered"}"#] == 3, "\(metrics.bodyText)")
        #expect(samples[#"linkout_visits_total{link="nl",kind="shopper"}"#] == 1, "a link's visits count apart")
        #expect(!metrics.bodyText.contains(#"link="nl",kind="registered""#), "a link never sees a registration")
    }

    /// A batch: each token judged on its own, the valid ones recorded whatever their neighbours, and the
    /// answer says which is which; a body of the wrong shape is refused whole.
    @Test func aBatchRecordsTheValidOnesAndRefusesEachBadOneWithItsReason() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        defer { server.stop() }
        let good = [UUID().uuidString.lowercased(), UUID().uuidString.lowercased()]
        let batch: Body = [
            "tokens": [
                ["token": Self.inAppToken(id: good[0]), "bundleId": "com.example", "country": "jp"],
                ["token": TokenBuilder.minted(bundleId: "com.other", appAppleId: 99), "bundleId": "com.other"],
                ["token": "not a token", "bundleId": "com.example"],
                ["token": Self.inAppToken(id: good[1]), "bundleId": "com.example"],
                ["token": Self.inAppToken(), "bundleId": "com.example", "country": "xx"],
                ["bundleId": "com.example"],
            ]
        ]
        let answer = try fixture.post(server, batch, path: "/v1/tokens")
        #expect(answer.status == 400)
        let results = Self.results(answer.json)
        #expect(
            results.map { $0["result"] as? String } == ["recorded", "refused", "refused", "recorded", "refused", "refused"],
            "\(answer.json)")
        #expect(results.map { $0["index"] as? Int } == [0, 1, 2, 3, 4, 5])
        #expect(results[1]["reason"] as? String == "unknown_app")
        #expect(results[2]["reason"] as? String == "token_not_json", "the link path's own reason")
        let countryError = (results[4]["errors"] as? [Body])?.first
        #expect(countryError?["field"] as? String == "tokens[4].country", "\(results[4])")
        #expect(((results[5]["errors"] as? [Body])?.first?["field"]) as? String == "tokens[5].token")
        // The two good ones are there, and a batch sent again changes nothing.
        let resent = try fixture.post(
            server, ["tokens": [["token": Self.inAppToken(id: good[0]), "bundleId": "com.example"]]], path: "/v1/tokens")
        #expect(Self.results(resent.json).first?["result"] as? String == "unchanged")

        for (body, message) in [("[]", "must be a JSON object"), (#"{"tokens": []}"#, "1 to 1000 tokens"), ("nope", "not JSON")] {
            let refused = try fixture.post(server, data: Data(body.utf8), path: "/v1/tokens")
            #expect(refused.status == 400)
            #expect(
                ((refused.json["errors"] as? [Body])?.first?["message"] as? String)?.contains(message) == true, "\(body): \(refused.json)")
        }
        let tooMany = (0...TokenRegistration.maxBatch).map { _ in ["token": "x", "bundleId": "com.example"] }
        #expect(try fixture.post(server, ["tokens": tooMany], path: "/v1/tokens").status == 400)
    }

    /// `tokens import` takes the same lines, from a file or standard input.
    @Test func tokensImportRecordsAFileOfRegistrations() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        try fixture.linkOut(server)
        server.stop()
        let ids = [UUID().uuidString.lowercased(), UUID().uuidString.lowercased()]
        let lines = [
            #"{"token": "\#(Self.inAppToken(id: ids[0]))", "bundleId": "com.example", "country": "jp"}"#,
            #"{"tokens": [{"token": "\#(Self.inAppToken(id: ids[1]))", "bundleId": "com.example"}, {"token": "bad", "bundleId": "com.example"}]}"#,
            #"{"token": "\#(Self.inAppToken(id: ids[0]))", "bundleId": "com.example"}"#,
        ]
        let file = fixture.folder.write("tokens.jsonl", lines.joined(separator: "\n") + "\n")
        let run = try LinkoutBinary.run(["tokens", "import", "--config", fixture.recordOnlyConfigPath, file])
        #expect(run.status == 1, "one line holds a refused token")
        #expect(run.stdout == "\(file): 2 tokens recorded, 1 already recorded; 1 refused\n", "\(run.stdout)")
        #expect(
            run.stderr.contains("\(file):2: tokens[1].token: does not decode to a token's JSON object (token_not_json)"), "\(run.stderr)")
        let export = try LinkoutBinary.run(["tokens", "export", "--config", fixture.recordOnlyConfigPath, "--format", "csv"])
        for id in ids { #expect(export.stdout.contains("\(id),"), "\(id)") }
        #expect(export.stdout.split(separator: "\n").count == 4, "a header, the link's token and the two registered")
    }

    /// `tokens import` into a folder no linkout has served yet creates the store as `serve` would (the same
    /// migrations), says so, and `serve` then takes that store as its own.
    @Test func tokensImportIntoANewStoreCreatesItAsServeWould() throws {
        let fixture = try ReportingFixture()
        try #require(!FileManager.default.fileExists(atPath: fixture.storePath))
        let id = UUID().uuidString.lowercased()
        let file = fixture.folder.write(
            "tokens.jsonl", #"{"token": "\#(Self.inAppToken(id: id))", "bundleId": "com.example", "country": "jp"}"# + "\n")
        let run = try LinkoutBinary.run(["tokens", "import", "--config", fixture.recordOnlyConfigPath, file])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "\(file): 1 tokens recorded, 0 already recorded; 0 refused\n", "\(run.stdout)")
        #expect(run.stderr == "note: created a new store at \(fixture.storePath)\n", "\(run.stderr)")
        let export = try LinkoutBinary.run(["tokens", "export", "--config", fixture.recordOnlyConfigPath, "--format", "csv"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains("\(id),"), "\(export.stdout)")

        // The store is serve's: it starts on it, records a link's token beside the imported one.
        let server = try fixture.serve(reporting: false)
        let linked = try fixture.linkOut(server)
        #expect(server.stop() == 0)
        let after = try LinkoutBinary.run(["tokens", "export", "--config", fixture.recordOnlyConfigPath, "--format", "csv"])
        #expect(after.stdout.contains("\(id),") && after.stdout.contains("\(linked),"), "\(after.stdout)")
        // Importing again into the store that now exists creates nothing, and says nothing of it.
        let again = try LinkoutBinary.run(["tokens", "import", "--config", fixture.recordOnlyConfigPath, file])
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again.stderr)")
        #expect(again.stdout == "\(file): 0 tokens recorded, 1 already recorded; 0 refused\n", "\(again.stdout)")
    }

    /// Several instances on PostgreSQL: a token registered on one and again on the other is one token,
    /// reported once.
    @Test func onPostgresATokenRegisteredOnTwoInstancesIsReportedOnce() throws {
        let url = try PostgresServer.createDatabase()
        let migrate = try LinkoutBinary.run(["store", "migrate", "--store", url])
        try #require(migrate.status == 0, "\(migrate.stderr)")
        let fixture = try ReportingFixture(store: url)
        let first = try fixture.serve(reporting: false)
        let second = try fixture.serve(reporting: false)
        let id = UUID().uuidString.lowercased()
        let body: Body = ["token": Self.inAppToken(id: id, ageDays: 4), "bundleId": "com.example", "country": "jp"]
        #expect(Self.results(try fixture.post(first, body, path: "/v1/tokens").json).first?["result"] as? String == "recorded")
        #expect(Self.results(try fixture.post(second, body, path: "/v1/tokens").json).first?["result"] as? String == "unchanged")
        first.stop()
        second.stop()
        #expect(try fixture.report().stdout.contains("1 accepted"))
        #expect(try fixture.production.accepted().count == 1)
    }
}
