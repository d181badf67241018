import Foundation
import LinkOutCore
import LinkOutStore
import LinkOutTestSupport
import Testing

/// PostgreSQL outages against a real server of the test's own (LinkOutTestSupport/PostgresServer.swift), stopped and
/// started under load: spooling keeps every redirect and counts every visit once; fail-closed answers 503.
@Suite(.serialized) struct StoreOutageTests {
    static let links = PostgresTests.links

    /// A dedicated server, a migrated database on it, and a config with the given storeOutage.
    private func setUp(_ folder: TemporaryFolder, outage: String) throws -> (server: PostgresServer, url: String, config: String) {
        let server = try PostgresServer.dedicated()
        let url = try server.createDatabase()
        let migrate = try LinkoutBinary.run(["store", "migrate", "--store", url])
        try #require(migrate.status == 0, "migrate failed: \(migrate.stderr)")
        let config = folder.write("config.json", TestConfig.json(links: Self.links, extra: #""storeOutage": \#(outage),"#))
        return (server, url, config)
    }

    /// Polls `/readyz` on the admin listener until `done` holds, or the timeout passes; the last answer.
    private func waitForReadyz(
        _ instance: GatewayProcess, timeout: TimeInterval = 60, until done: (HTTPResponse) -> Bool
    ) throws -> HTTPResponse {
        let deadline = Date().addingTimeInterval(timeout)
        var response = try fetch(port: instance.adminPort, "GET", "/readyz")
        while !done(response), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            response = try fetch(port: instance.adminPort, "GET", "/readyz")
        }
        return response
    }

    /// What is left in a spool file: its visits, as tokens (0 when it was fully replayed).
    private func spooledTokens(_ path: String) throws -> Int {
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        let spool = try SQLiteTokenStore(readingFrom: path)
        var count = 0
        try spool.forEachToken { _ in count += 1 }
        return count
    }

    /// Sends link-outs from `threads` threads until `stop` is set: new ids mostly, and repeats of ids the
    /// thread already sent. Every outcome is recorded, failures too.
    private func load(port: Int, threads: Int, stop: LockedFlag, outcomes: VisitOutcomes) -> DispatchGroup {
        let group = DispatchGroup()
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var sent: [String] = []
                var connection: HTTPConnection?
                var round = 0
                while !stop.isSet {
                    round += 1
                    let id = round % 4 == 0 && !sent.isEmpty ? sent.randomElement()! : UUID().uuidString.lowercased()
                    if !sent.contains(id) { sent.append(id) }
                    do {
                        if connection == nil { connection = try HTTPConnection(port: port, timeoutSeconds: 20) }
                        let response = try connection!.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id)))
                        outcomes.add(id: id, status: response.status)
                        if response.status != 302 { connection = nil }
                    } catch {
                        connection = nil
                        outcomes.add(id: id, status: 0)
                    }
                }
            }
        }
        return group
    }

    /// Every id that got a 302 is exported exactly once with as many hits as 302s.
    private func expectExportMatches(_ outcomes: [(id: String, status: Int)], url: String) throws {
        var redirects: [String: Int] = [:]
        for outcome in outcomes where outcome.status == 302 { redirects[outcome.id, default: 0] += 1 }
        let exported = try exportTokens(store: url)
        var hits: [String: Int] = [:]
        for token in exported {
            let id = token["externalPurchaseId"] as? String ?? ""
            #expect(hits[id] == nil, "\(id) exported twice")
            hits[id] = (token["hits"] as? NSNumber)?.intValue ?? -1
        }
        let missing = redirects.keys.filter { hits[$0] == nil }
        #expect(missing.isEmpty, "\(missing.count) of \(redirects.count) redirected ids are not in PostgreSQL")
        let wrong = redirects.filter { hits[$0.key] != nil && hits[$0.key] != $0.value }
        #expect(
            wrong.isEmpty,
            "\(wrong.count) ids with wrong hits: \(wrong.prefix(5).map { "\($0.key): \(hits[$0.key]!) hits, \($0.value) redirects" })")
        let extra = hits.keys.filter { redirects[$0] == nil }
        #expect(extra.isEmpty, "\(extra.count) exported ids never got a 302")
    }

    @Test func postgresStoppedMidLoadKeepsRedirectingAndCountsEveryVisitOnce() throws {
        let folder = TemporaryFolder()
        let spool = folder.file("spool.sqlite")
        let (server, url, config) = try setUp(folder, outage: #"{ "mode": "spool", "spoolPath": "spool.sqlite", "timeoutMs": 1000 }"#)
        defer { server.stop() }
        let instance = try GatewayProcess(config: config, store: url, extraArguments: ["--spool", spool])
        #expect(try fetch(port: instance.adminPort, "GET", "/readyz").bodyText == "ready\n")

        let outcomes = VisitOutcomes()
        let stop = LockedFlag()
        let group = load(port: instance.port, threads: 4, stop: stop, outcomes: outcomes)
        Thread.sleep(forTimeInterval: 1)
        server.stopServer()
        let stoppedAt = outcomes.count
        let degraded = try waitForReadyz(instance, timeout: 10) { $0.bodyText.hasPrefix("degraded") }
        let degradedMetrics = MetricsTests.parse(try fetch(port: instance.adminPort, "GET", "/metrics").bodyText)
        #expect(degradedMetrics["linkout_store_degraded"] == 1)
        Thread.sleep(forTimeInterval: 2)
        let duringOutage = outcomes.count - stoppedAt
        try server.startServer()
        Thread.sleep(forTimeInterval: 1.5)
        stop.set()
        group.wait()

        // Load balancers keep a spooling instance: 200, with a header and body monitoring can alert on.
        #expect(degraded.status == 200)
        #expect(degraded.bodyText.hasPrefix("degraded: spooling ("), "\(degraded.bodyText)")
        #expect(degraded[header: "x-linkout-degraded"] == "spool")
        #expect(duringOutage > 50, "the load went on through the outage (\(duringOutage) requests)")

        let results = outcomes.all
        let failed = results.filter { $0.status != 302 }
        #expect(failed.isEmpty, "\(failed.count) of \(results.count) requests got no 302: \(Set(failed.map(\.status)))")
        #expect(Set(results.map(\.id)).count < results.count, "ids were repeated")

        // Drained: /readyz says ready again, and the spool is empty.
        let ready = try waitForReadyz(instance) { $0.bodyText == "ready\n" }
        #expect(ready.bodyText == "ready\n")
        #expect(ready[header: "x-linkout-degraded"] == nil)
        let metrics = MetricsTests.parse(try fetch(port: instance.adminPort, "GET", "/metrics").bodyText)
        #expect(metrics["linkout_spool_visits"] == 0)
        #expect(metrics["linkout_store_degraded"] == 0)
        #expect(instance.stop() == 0)
        #expect(instance.log.contains("recording visits in the local spool"))
        #expect(try spooledTokens(spool) == 0)
        try expectExportMatches(results, url: url)
    }

    @Test func failClosedAnswers503AndRecordsNothingWhilePostgresIsDown() throws {
        let folder = TemporaryFolder()
        let (server, url, config) = try setUp(folder, outage: #"{ "mode": "fail-closed", "timeoutMs": 500 }"#)
        defer { server.stop() }
        let instance = try GatewayProcess(config: config, store: url)
        let before = UUID().uuidString.lowercased()
        #expect(try instance.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: before))).status == 302)

        server.stopServer()
        let refused = UUID().uuidString.lowercased()
        let response = try instance.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: refused)))
        #expect(response.status == 503)
        #expect(response[header: "location"] == nil)
        // No Accept-Language: the page in the link's country's language (/nl: Dutch), from Public/.
        let page = try ShopperPages.catalog().page(.unavailable, language: ShopperLanguage.choose(acceptLanguage: nil, country: "nl"))
        #expect(response.body == page)
        let readyz = try fetch(port: instance.adminPort, "GET", "/readyz")
        #expect(readyz.status == 503)
        #expect(readyz.bodyText == "store failing\n")
        // The commit failed (the visit was handed to the writer, which could not store it): counted as what
        // the shopper got, at the answer, the 503, not the redirect it would have been.
        #expect(instance.accessLog(atLeast: 2).last?["reason"] as? String == "store_failed")
        let metrics = MetricsTests.parse(try fetch(port: instance.adminPort, "GET", "/metrics").bodyText)
        #expect(metrics[#"linkout_link_requests_total{link="nl",outcome="redirect"}"#] == 1)
        #expect(metrics[#"linkout_link_requests_total{link="nl",outcome="unavailable"}"#] == 1)
        #expect(metrics.filter { $0.key.hasPrefix(#"linkout_redirects_total{link="nl","#) }.values.reduce(0, +) == 1)
        #expect(metrics[#"linkout_visits_total{link="nl",kind="shopper"}"#] == 2, "both visits were handed to the writer")

        try server.startServer()
        let ready = try waitForReadyz(instance) { $0.status == 200 }
        #expect(ready.bodyText == "ready\n")
        let after = UUID().uuidString.lowercased()
        #expect(try instance.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: after))).status == 302)
        #expect(instance.stop() == 0)
        let ids = Set(try exportTokens(store: url).compactMap { $0["externalPurchaseId"] as? String })
        #expect(ids == [before, after])
    }

    /// kill -9 while PostgreSQL is down: what was redirected is in the spool; the instance restarted with
    /// PostgreSQL back replays it, each visit once.
    @Test func killNineWhileSpoolingLosesNothingAfterARestart() throws {
        let folder = TemporaryFolder()
        let spool = folder.file("spool.sqlite")
        let (server, url, config) = try setUp(folder, outage: #"{ "timeoutMs": 1000 }"#)
        defer { server.stop() }
        let victim = try GatewayProcess(config: config, store: url, extraArguments: ["--spool", spool])

        let outcomes = VisitOutcomes()
        let stop = LockedFlag()
        let group = load(port: victim.port, threads: 4, stop: stop, outcomes: outcomes)
        Thread.sleep(forTimeInterval: 0.5)
        server.stopServer()
        _ = try waitForReadyz(victim, timeout: 10) { $0.bodyText.hasPrefix("degraded") }
        Thread.sleep(forTimeInterval: 1.5)
        victim.crash()
        stop.set()
        group.wait()
        let results = outcomes.all
        let redirected = results.filter { $0.status == 302 }
        #expect(redirected.count > 100)
        #expect(try spooledTokens(spool) > 0, "visits were spooled before the kill")

        try server.startServer()
        let restarted = try GatewayProcess(config: config, store: url, extraArguments: ["--spool", spool])
        let drained = try waitForReadyz(restarted) { $0.bodyText == "ready\n" }
        #expect(drained.bodyText == "ready\n")
        #expect(restarted.stop() == 0)
        #expect(try spooledTokens(spool) == 0)
        // Requests cut off by the kill got no 302, but may have been recorded: only 302s are owed.
        var redirects: [String: Int] = [:]
        for outcome in redirected { redirects[outcome.id, default: 0] += 1 }
        var attempts: [String: Int] = [:]
        for outcome in results { attempts[outcome.id, default: 0] += 1 }
        let exported = try exportTokens(store: url)
        var hits: [String: Int] = [:]
        for token in exported { hits[token["externalPurchaseId"] as? String ?? ""] = (token["hits"] as? NSNumber)?.intValue ?? -1 }
        let missing = redirects.keys.filter { hits[$0] == nil }
        #expect(missing.isEmpty, "\(missing.count) of \(redirects.count) redirected ids were lost")
        let wrong = redirects.filter { id, count in
            guard let stored = hits[id] else { return false }
            return stored < count || stored > attempts[id]!
        }
        #expect(wrong.isEmpty, "\(wrong.count) ids counted wrong: \(wrong.prefix(5))")
    }

    /// An app's backend registering a token while PostgreSQL is down is answered as a shopper is: the
    /// token is spooled, `recorded`, and in PostgreSQL once it is back.
    @Test func aTokenRegisteredDuringAnOutageIsSpooledAndReplayed() throws {
        let folder = TemporaryFolder()
        let spool = folder.file("spool.sqlite")
        let (server, url, _) = try setUp(folder, outage: #"{ "timeoutMs": 1000 }"#)
        defer { server.stop() }
        let made = APIKeys.newKey(name: "backend")
        folder.write("api-keys", made.line + "\n")
        let config = folder.write(
            "api.json",
            TestConfig.json(
                links: Self.links,
                extra: #""storeOutage": { "timeoutMs": 1000 }, "api": { "listen": "127.0.0.1:0", "keysFile": "api-keys" },"#))
        let instance = try GatewayProcess(config: config, store: url, extraArguments: ["--spool", spool, "--api-listen", "127.0.0.1:0"])
        server.stopServer()
        // A link-out first, so the instance knows PostgreSQL is down.
        #expect(try instance.get(TokenBuilder.linkOut(token: TokenBuilder.minted())).status == 302)
        _ = try waitForReadyz(instance, timeout: 10) { $0.bodyText.hasPrefix("degraded") }
        let id = UUID().uuidString.lowercased()
        let body = Array(#"{"token": "\#(TokenBuilder.minted(id: id))", "bundleId": "com.example", "country": "nl"}"#.utf8)
        let connection = try HTTPConnection(port: instance.apiPort)
        try connection.sendRaw(
            Array(
                "POST /v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(made.key)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                    .utf8) + body)
        let answer = try connection.readResponse()
        #expect(answer.status == 200 && answer.bodyText.contains("\"result\":\"recorded\""), "\(answer.status) \(answer.bodyText)")
        #expect(try spooledTokens(spool) == 2, "the link-out's token and the registered one")
        try server.startServer()
        _ = try waitForReadyz(instance) { $0.bodyText == "ready\n" }
        #expect(instance.stop() == 0)
        #expect(
            try exportTokens(store: url).contains { $0["externalPurchaseId"] as? String == id && $0["link"] as? String == "registered" })
    }

    /// With reporting, the API and Apple's notifications on, serve still starts while PostgreSQL is down, as
    /// spool mode promises (it exited 1, "cannot take Apple's notifications", when bench/soak restarted an
    /// instance during an outage): shoppers are spooled, the checkout and Apple get 503 meanwhile, and
    /// everything is reported once PostgreSQL is back.
    @Test func serveWithReportingStartsWhilePostgresIsDownAndReportsOnceItIsBack() throws {
        let server = try PostgresServer.dedicated()
        defer { server.stop() }
        let url = try server.createDatabase()
        try #require(try LinkoutBinary.run(["store", "migrate", "--store", url]).status == 0)
        let fixture = try ReportingFixture(top: #""storeOutage": { "timeoutMs": 1000 },"#, store: url, notifications: true)
        server.stopServer()

        let instance = try fixture.serve()
        #expect(instance.log.contains("PostgreSQL unreachable at start; the reporter connects once it answers"), "\(instance.log)")
        let id = try fixture.linkOut(instance, ageDays: 4)  // past its window: due as soon as PostgreSQL has it
        let lines: [String: Any] = ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy("order-1")]]
        #expect(try fixture.post(instance, lines).status == 503)
        let unknown = UUID().uuidString.lowercased()
        let notification = try NotificationSigner.shared().sign(
            NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: unknown))
        #expect(try fixture.notify(instance, notification).status == 503)

        try server.startServer()
        _ = try waitForReadyz(instance) { $0.bodyText == "ready\n" }
        #expect(try fixture.notify(instance, notification) == (200, "unrecognized"))
        let accepted = try fixture.production.waitForAccepted(count: 2, timeout: 30)
        let statuses = Dictionary(
            uniqueKeysWithValues: accepted.map { ($0["externalPurchaseId"] as? String ?? "", $0["status"] as? String ?? "") })
        #expect(statuses == [id: "NO_LINE_ITEM", unknown: "UNRECOGNIZED_TOKEN"])
        #expect(try fixture.post(instance, lines).status == 200)
        #expect(instance.stop() == 0)
    }

    /// libpq's errors run over several lines ("…Connection refused\n\tIs the server running…"): the text
    /// log keeps each record on one physical line, so a line-based alert on the warning sees its cause.
    @Test func anUnreachablePostgresIsLoggedOneRecordALine() throws {
        // Nothing listens on port 1: refused at once, no server needed.
        let instance = try GatewayProcess(store: "postgres://linkout@127.0.0.1:1/linkout")
        defer { instance.stop() }
        let lines = instance.log.split(separator: "\n")
        let unreachable = lines.filter { $0.contains("PostgreSQL unreachable at start") }
        #expect(!unreachable.isEmpty, "\(instance.log)")
        for line in unreachable {
            #expect(line.contains("Connection refused") && line.contains(#"\n"#), "libpq's whole error on the record's line: \(line)")
        }
        // Every line is a record of its own: it begins with the record's timestamp, not a continuation.
        let continuations = lines.filter { $0.firstMatch(of: #/^\d{4}-\d{2}-\d{2}T/#) == nil }
        #expect(continuations.isEmpty, "\(instance.log)")
    }

    @Test func aSpoolInUseByAnotherInstanceIsRefused() throws {
        let folder = TemporaryFolder()
        let spool = folder.file("spool.sqlite")
        let url = try PostgresServer.createDatabase()
        #expect(try LinkoutBinary.run(["store", "migrate", "--store", url]).status == 0)
        let config = folder.write("config.json", TestConfig.json(links: Self.links))
        let first = try GatewayProcess(config: config, store: url, extraArguments: ["--spool", spool])
        let second = try LinkoutBinary.run([
            "serve", "--config", config, "--store", url, "--spool", spool, "--listen", "127.0.0.1:0", "--admin-listen", "off",
        ])
        #expect(second.status == 1)
        // Found by the pre-flight, which check-config shares, and named as the option's.
        #expect(
            second.stderr.contains("error: --spool: \(spool) is in use by another linkout: give each instance a spool of its own"),
            "\(second.stderr)")
        let checked = try LinkoutBinary.run([
            "check-config", "--config",
            folder.write(
                "pg.json",
                TestConfig.json(
                    links: Self.links,
                    extra: """
                        "server": { "listen": "127.0.0.1:0", "adminListen": "127.0.0.1:0" },
                        "store": "\(url)", "storeOutage": { "spoolPath": "\(spool)" },
                        """)),
        ])
        // check-config notes it (the linkout holding it may be the one whose config is checked before a reload).
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(
            checked.stderr.contains("note: \(folder.file("pg.json")): storeOutage.spoolPath: \(spool) is in use by another linkout"),
            "\(checked.stderr)")
        #expect(first.stop() == 0)
    }
}

final class VisitOutcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(id: String, status: Int)] = []

    func add(id: String, status: Int) {
        lock.lock()
        items.append((id, status))
        lock.unlock()
    }

    var all: [(id: String, status: Int)] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return items.count
    }
}
