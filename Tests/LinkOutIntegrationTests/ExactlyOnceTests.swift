import Foundation
import LinkOutTestSupport
import Testing

/// Exactly-once batches on PostgreSQL: a batch whose COMMIT landed although linkout never heard so (the
/// connection cut between the COMMIT and its answer, by Support/CommitCuttingProxy) is not counted again,
/// whether the writer retries it (fail-closed) or spools it and replays the spool (spool); nor under an
/// immediate PostgreSQL shutdown and a `kill -9` of an instance mid-load.
@Suite(.serialized) struct ExactlyOnceTests {
    static let links = PostgresTests.links

    /// What one request was and what it got: a bot's visit counts in otherVisits, not hits. Status -1: the
    /// connection was refused (never sent); 0: cut off without an answer.
    struct Outcome {
        var id: String
        var bot: Bool
        var status: Int
    }

    final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [Outcome] = []
        func add(_ outcome: Outcome) {
            lock.lock()
            items.append(outcome)
            lock.unlock()
        }
        var all: [Outcome] {
            lock.lock()
            defer { lock.unlock() }
            return items
        }
    }

    /// `threads` clients on `ids` (overlapping: each picks at random), one request in five from a bot, until
    /// `stop` is set; the clients go round the `ports` (instances).
    private func load(ports: [Int], threads: Int, ids: [String], stop: LockedFlag, outcomes: Outcomes) -> DispatchGroup {
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                let port = ports[thread % ports.count]
                var connection: HTTPConnection?
                var round = 0
                while !stop.isSet {
                    round += 1
                    let id = ids.randomElement()!
                    let bot = round % 5 == 0
                    if connection == nil {
                        // Refused: never sent, so certainly not recorded (-1, apart from a request cut off: 0).
                        connection = try? HTTPConnection(port: port, timeoutSeconds: 20)
                        if connection == nil {
                            outcomes.add(Outcome(id: id, bot: bot, status: -1))
                            Thread.sleep(forTimeInterval: 0.01)
                            continue
                        }
                    }
                    do {
                        let response = try connection!.request(
                            "GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id)),
                            headers: bot ? ["User-Agent: python-requests/2.31"] : [])
                        outcomes.add(Outcome(id: id, bot: bot, status: response.status))
                        if response.status != 302 { connection = nil }
                    } catch {
                        connection = nil
                        outcomes.add(Outcome(id: id, bot: bot, status: 0))
                    }
                }
            }
        }
        return group
    }

    private func waitForReady(_ instance: GatewayProcess, timeout: TimeInterval = 60) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try fetch(port: instance.adminPort, "GET", "/readyz").bodyText == "ready\n" { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// Compares the export with the 302s: every id with exactly as many hits and other visits as it got
    /// redirects, or, for ids whose requests `uncertain` says may have been recorded unanswered (a killed
    /// instance), between the redirects and the attempts. Returns the mismatches, described.
    private func mismatches(_ outcomes: [Outcome], url: String, uncertain: Set<String> = []) throws -> [String] {
        var redirected: [String: (hits: Int, other: Int)] = [:]
        var attempted: [String: (hits: Int, other: Int)] = [:]
        for outcome in outcomes where outcome.status != -1 {
            var attempt = attempted[outcome.id] ?? (0, 0)
            if outcome.bot { attempt.other += 1 } else { attempt.hits += 1 }
            attempted[outcome.id] = attempt
            guard outcome.status == 302 else { continue }
            var counts = redirected[outcome.id] ?? (0, 0)
            if outcome.bot { counts.other += 1 } else { counts.hits += 1 }
            redirected[outcome.id] = counts
        }
        var stored: [String: (hits: Int, other: Int)] = [:]
        var problems: [String] = []
        for token in try exportTokens(store: url) {
            let id = token["externalPurchaseId"] as? String ?? ""
            if stored[id] != nil { problems.append("\(id) exported twice") }
            stored[id] = ((token["hits"] as? NSNumber)?.intValue ?? -1, (token["otherVisits"] as? NSNumber)?.intValue ?? -1)
        }
        for (id, counts) in redirected {
            guard let found = stored[id] else {
                problems.append("\(id): redirected \(counts.hits)+\(counts.other), not stored")
                continue
            }
            if uncertain.contains(id) {
                let most = attempted[id]!
                if found.hits < counts.hits || found.other < counts.other || found.hits > most.hits || found.other > most.other {
                    problems.append(
                        "\(id): \(found.hits) hits, \(found.other) other for \(counts.hits)+\(counts.other) redirects of \(most.hits)+\(most.other) attempts"
                    )
                }
            } else if found.hits != counts.hits || found.other != counts.other {
                problems.append(
                    "\(id): \(found.hits) hits and \(found.other) other visits for \(counts.hits) and \(counts.other) redirects")
            }
        }
        for id in stored.keys where redirected[id] == nil && !uncertain.contains(id) {
            problems.append("\(id) stored but never redirected")
        }
        return problems
    }

    /// 20 lost COMMIT acknowledgements, one per run, under load from 4 clients on 300 overlapping ids: after
    /// each, every id's hits and other visits in PostgreSQL equal its 302s.
    @Test(arguments: ["spool", "fail-closed"])
    func aCommitWhoseAcknowledgementIsLostIsCountedOnce(mode: String) throws {
        let folder = TemporaryFolder()
        let server = try PostgresServer.dedicated()
        defer { server.stop() }
        let url = try server.createDatabase()
        try #require(try LinkoutBinary.run(["store", "migrate", "--store", url]).status == 0)
        let proxy = try CommitCuttingProxy(upstreamPort: server.port)
        defer { proxy.stop() }
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: Self.links, extra: #""storeOutage": { "mode": "\#(mode)", "timeoutMs": 1000 },"#))
        let instance = try GatewayProcess(config: config, store: proxy.route(url, serverPort: server.port))
        let ids = (0..<300).map { _ in UUID().uuidString.lowercased() }
        let outcomes = Outcomes()
        var report: [String] = []
        var failedRuns = 0
        for run in 1...20 {
            let stop = LockedFlag()
            let group = load(ports: [instance.port], threads: 4, ids: ids, stop: stop, outcomes: outcomes)
            Thread.sleep(forTimeInterval: 0.15)
            try proxy.arm()
            let cut = try proxy.waitForCuts(run)
            Thread.sleep(forTimeInterval: 0.1)
            stop.set()
            group.wait()
            #expect(cut, "run \(run): no COMMIT was cut")
            #expect(try waitForReady(instance), "run \(run): not back to ready")
            let all = outcomes.all
            let problems = try mismatches(all, url: url)
            let refused = all.filter { $0.status != 302 }.count
            report.append("run \(run): \(all.count) requests, \(refused) not 302, \(problems.count) ids counted wrong")
            if !problems.isEmpty { failedRuns += 1 }
            #expect(problems.isEmpty, "run \(run) (\(mode)): \(problems.prefix(5))")
            // Every request still got its 302: the outcome of the cut batch was settled without the shopper.
            #expect(refused == 0, "run \(run) (\(mode)): \(refused) requests got no 302")
        }
        let all = outcomes.all
        let hits = all.filter { !$0.bot }.count
        let other = all.filter(\.bot).count
        // The same totals read from PostgreSQL itself, and the batch identities that made them exact.
        let totals = try server.query(url, "SELECT sum(hits), sum(other_visits), count(*) FROM tokens")
        #expect(totals == ["\(hits)|\(other)|300"] || totals == ["\(hits)|\(other)|\(Set(all.map(\.id)).count)"], "\(totals)")
        let batches = try server.query(
            url, "SELECT count(*) FILTER (WHERE NOT via_spool), count(*) FILTER (WHERE via_spool) FROM applied_batches")
        print(
            "exactly-once \(mode): \(try proxy.cuts()) COMMITs cut in 20 runs, \(all.count) requests (\(hits) shopper, \(other) bot) on 300 ids, runs with a double count: \(failedRuns); psql: tokens \(totals), applied_batches direct|via spool \(batches)\n  "
                + report.joined(separator: "\n  "))
        if mode == "spool" {
            // The writer spooled each cut batch, and the replay found it already in PostgreSQL.
            #expect(instance.log.contains("cleared without counting them again"))
        }
        #expect(instance.stop() == 0)
    }

    /// Two instances on one PostgreSQL under load on 300 overlapping ids: PostgreSQL shut down immediately
    /// (`pg_ctl stop -m immediate`) and started again, then one instance killed with SIGKILL and started
    /// again on its spool. Every id's hits and other visits equal its 302s (for ids a killed request may
    /// have been recorded for without its 302, between the 302s and the attempts).
    @Test func immediateShutdownAndKillNineCountEveryVisitOnce() throws {
        let folder = TemporaryFolder()
        let server = try PostgresServer.dedicated()
        defer { server.stop() }
        let url = try server.createDatabase()
        try #require(try LinkoutBinary.run(["store", "migrate", "--store", url]).status == 0)
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: Self.links, extra: #""storeOutage": { "mode": "spool", "timeoutMs": 1000 },"#))
        let spoolB = folder.file("b.spool.sqlite")
        let a = try GatewayProcess(config: config, store: url)
        var b = try GatewayProcess(config: config, store: url, extraArguments: ["--spool", spoolB])
        let ids = (0..<300).map { _ in UUID().uuidString.lowercased() }
        let outcomes = Outcomes()

        // PostgreSQL killed mid-load, and back.
        var stop = LockedFlag()
        var group = load(ports: [a.port, b.port], threads: 4, ids: ids, stop: stop, outcomes: outcomes)
        Thread.sleep(forTimeInterval: 0.7)
        server.crashServer()
        Thread.sleep(forTimeInterval: 1.5)
        try server.startServer()
        Thread.sleep(forTimeInterval: 1)
        stop.set()
        group.wait()
        #expect(try waitForReady(a))
        #expect(try waitForReady(b))
        let afterCrash = outcomes.all
        #expect(afterCrash.allSatisfy { $0.status == 302 }, "\(afterCrash.filter { $0.status != 302 }.count) requests got no 302")
        let crashProblems = try mismatches(afterCrash, url: url)
        #expect(crashProblems.isEmpty, "after the immediate shutdown: \(crashProblems.prefix(5))")

        // One instance killed mid-load, and started again on its spool.
        let killedFrom = afterCrash.count
        stop = LockedFlag()
        group = load(ports: [a.port, b.port], threads: 4, ids: ids, stop: stop, outcomes: outcomes)
        Thread.sleep(forTimeInterval: 0.7)
        b.crash()
        Thread.sleep(forTimeInterval: 0.2)
        stop.set()
        group.wait()
        b = try GatewayProcess(config: config, store: url, extraArguments: ["--spool", spoolB])
        #expect(try waitForReady(b))
        let all = outcomes.all
        let uncertain = Set(all[killedFrom...].filter { $0.status == 0 }.map(\.id))
        let problems = try mismatches(all, url: url, uncertain: uncertain)
        #expect(problems.isEmpty, "after the kill: \(problems.prefix(5))")
        print(
            "exactly-once crash: \(afterCrash.count) requests through the immediate shutdown, \(all.count - killedFrom) through the kill -9 (\(uncertain.count) ids with an unanswered request), \(problems.count + crashProblems.count) ids counted wrong"
        )
        #expect(a.stop() == 0)
        #expect(b.stop() == 0)
    }
}
