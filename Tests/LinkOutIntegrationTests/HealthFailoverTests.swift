import Foundation
import LinkOutTestSupport
import Testing

/// Health-checked failover against the real binary and real local HTTPS destinations (certificates from
/// a throwaway CA the config trusts): a destination going down and up under load, and all going down.
@Suite(.serialized)
struct HealthFailoverTests {
    /// What the load thread saw: each redirect's token id and Location, by when its request was sent. A
    /// request sent after the admin listener showed a change was decided after it (the slot changes before
    /// the gauge), so no margin of time is needed.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [(at: Date, id: String, location: String)] = []
        private(set) var failures: [String] = []
        func add(_ id: String, _ location: String, sentAt: Date) { lock.withLock { items.append((sentAt, id, location)) } }
        func fail(_ text: String) { lock.withLock { failures.append(text) } }
        func since(_ time: Date) -> [(id: String, location: String)] {
            lock.withLock { items.filter { $0.at > time }.map { ($0.id, $0.location) } }
        }

        /// The answers to requests sent after `time`, once there are more than 20 of them: on a machine
        /// busy with other tests, a fixed pause could see none (the suite once took 64 s instead of 5).
        func twentyOneSince(_ time: Date, timeout: TimeInterval = 30) -> [(id: String, location: String)] {
            let deadline = Date().addingTimeInterval(timeout)
            var answers = since(time)
            while answers.count <= 20 && Date() < deadline {
                usleep(50_000)
                answers = since(time)
            }
            return answers
        }
    }

    /// Polls the admin listener's `linkout_destination_up` until it shows `value` for `target`.
    func waitForHealth(_ server: GatewayProcess, target: String, _ value: Int, timeout: TimeInterval = 10) throws -> Date {
        let deadline = Date().addingTimeInterval(timeout)
        let line = "linkout_destination_up{target=\"\(target)\"} \(value)"
        while Date() < deadline {
            if try fetch(port: server.adminPort, "GET", "/metrics").bodyText.contains(line) { return Date() }
            usleep(50_000)
        }
        Issue.record("\(target) never became \(value)")
        return Date()
    }

    @Test func aDestinationDownAndUpUnderLoadThenAllDown() throws {
        let folder = TemporaryFolder()
        let certificates = try TestCertificates(in: folder)
        let a = try TestDestination(https: certificates)
        let b = try TestDestination(https: certificates)
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: """
                    [{ "id": "nl", "path": "/nl", "country": "nl",
                       "destinations": [{ "url": "\(a.url("/checkout"))", "health": "origin" },
                                        { "url": "\(b.url("/checkout"))", "health": "\(b.url("/healthz"))" }],
                       "fallback": "https://sorry.example/maintenance" }]
                    """,
                extra: """
                    "healthChecks": { "intervalSeconds": 0.2, "timeoutMs": 1000, "downAfter": 2, "upAfter": 2, "caFile": "\(certificates.caFile)" },
                    """))
        let server = try GatewayProcess(config: config, store: folder.file("store.sqlite"))
        let aHealth = a.url("/"), bHealth = b.url("/healthz")
        // The gauge starts at 1; a passing check, certificate verified, is what shows the checker at work.
        try a.waitForChecks(atLeast: 1)
        #expect(try a.checks().first?.status == 200)
        #expect(try b.checks().allSatisfy { $0.method == "GET" && $0.path == "/healthz" })

        // Each token's destination with both up.
        let ids = (0..<120).map { _ in UUID().uuidString.lowercased() }
        var usual: [String: String] = [:]
        for id in ids {
            let location = try #require(try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id)))[header: "Location"])
            usual[id] = location.hasPrefix(a.origin) ? "a" : "b"
        }
        #expect(Set(usual.values) == ["a", "b"])

        // Load from another thread for the rest of the test, cycling through the same ids.
        let seen = Seen()
        let stop = LockedFlag()
        let load = DispatchGroup()
        load.enter()
        let port = server.port
        Thread.detachNewThread {
            defer { load.leave() }
            var index = 0
            while !stop.isSet {
                let id = ids[index % ids.count]
                index += 1
                do {
                    let sent = Date()
                    let response = try fetch(port: port, "GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id)))
                    guard response.status == 302, let location = response[header: "Location"] else {
                        seen.fail("status \(response.status)")
                        continue
                    }
                    seen.add(id, location, sentAt: sent)
                } catch {
                    seen.fail("\(error)")
                }
            }
        }
        defer {
            stop.set()
            load.wait()
        }
        func destination(_ location: String) -> String {
            location.hasPrefix(a.origin)
                ? "a" : location.hasPrefix(b.origin) ? "b" : location.hasPrefix("https://sorry.example/") ? "fallback" : location
        }

        // A goes down: after the threshold, nothing goes to A; B's tokens never moved.
        try a.set(.status(503))
        let aDown = try waitForHealth(server, target: aHealth, 0)
        let whileDown = seen.twentyOneSince(aDown)
        #expect(whileDown.count > 20)
        #expect(whileDown.allSatisfy { destination($0.location) == "b" }, "no redirect to a down destination after the threshold")

        // A comes back: every token is sticky to its usual destination again.
        try a.set(.healthy)
        let aUp = try waitForHealth(server, target: aHealth, 1)
        let afterRecovery = seen.twentyOneSince(aUp)
        #expect(afterRecovery.count > 20)
        #expect(afterRecovery.allSatisfy { destination($0.location) == usual[$0.id] }, "stickiness back after recovery")

        // Both down: the link's fallback, counted and logged.
        try a.set(.status(503))
        try b.set(.closed)
        _ = try waitForHealth(server, target: aHealth, 0)
        let allDown = try waitForHealth(server, target: bHealth, 0)
        let fallback = seen.twentyOneSince(allDown)
        #expect(fallback.count > 20)
        #expect(fallback.allSatisfy { destination($0.location) == "fallback" })
        #expect(fallback.allSatisfy { $0.location.contains("externalPurchaseId=\($0.id)") })
        let metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
        #expect(metrics.contains(#"linkout_all_destinations_down_total{link="nl"}"#))
        #expect(!metrics.contains(#"linkout_all_destinations_down_total{link="nl"} 0"#))

        stop.set()
        load.wait()
        #expect(seen.failures.isEmpty, "every request was answered: \(seen.failures.prefix(3))")
        #expect(server.stop() == 0)
        let log = try String(contentsOfFile: server.logPath, encoding: .utf8)
        #expect(log.contains("destination down"))
        #expect(log.contains("destination up"))
        #expect(log.contains("every destination of a link is down"))
    }

    @Test func aCertificateFromAnotherCAIsADownDestination() throws {
        let folder = TemporaryFolder()
        let certificates = try TestCertificates(in: folder)
        let a = try TestDestination(https: certificates)
        try a.present(.unknownCA)
        let b = try TestDestination(https: certificates)
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: """
                    [{ "id": "nl", "path": "/nl", "country": "nl",
                       "destinations": [{ "url": "\(a.url("/checkout"))", "health": "origin" }, { "url": "\(b.url("/checkout"))", "health": "origin" }] }]
                    """,
                extra: """
                    "healthChecks": { "intervalSeconds": 0.2, "timeoutMs": 1000, "downAfter": 1, "upAfter": 1, "caFile": "\(certificates.caFile)" },
                    """))
        let server = try GatewayProcess(config: config, store: folder.file("store.sqlite"))
        _ = try waitForHealth(server, target: a.url("/"), 0)
        for _ in 0..<30 {
            let location = try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()))[header: "Location"]
            #expect(location?.hasPrefix(b.origin) == true)
        }
        #expect(server.stop() == 0)
    }

    /// Waits until the server's log holds `text` at least `count` times.
    func waitForLog(_ server: GatewayProcess, _ text: String, count: Int, timeout: TimeInterval = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let log = (try? String(contentsOfFile: server.logPath, encoding: .utf8)) ?? ""
            if log.components(separatedBy: text).count - 1 >= count { return }
            usleep(50_000)
        }
        Issue.record("'\(text)' not logged \(count) times")
    }

    @Test func aReloadKeepsADestinationsStateAndChecksWhatTheNewConfigNames() throws {
        let folder = TemporaryFolder()
        let certificates = try TestCertificates(in: folder)
        let a = try TestDestination(https: certificates)
        let c = try TestDestination(https: certificates)
        func config(b: String, withA: Bool = true, withC: Bool) -> String {
            var destinations = [#"{ "url": "\#(b)" }"#]
            if withA { destinations.append(#"{ "url": "\#(a.url("/checkout"))", "health": "origin" }"#) }
            var links = [#"{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [\#(destinations.joined(separator: ","))] }"#]
            if withC {
                links.append(
                    #"{ "id": "de", "path": "/de", "country": "de", "destinations": [{ "url": "\#(c.url("/checkout"))", "health": "origin" }] }"#
                )
            }
            // downAfter 5 at 0.2 s: a destination whose state a reload forgot would count as up (the start
            // state) for about a second before five failed checks marked it down again.
            return TestConfig.json(
                links: "[" + links.joined(separator: ",") + "]",
                extra: """
                    "healthChecks": { "intervalSeconds": 0.2, "timeoutMs": 1000, "downAfter": 5, "upAfter": 5, "caFile": "\(certificates.caFile)" },
                    """)
        }
        let path = folder.file("config.json")
        try ReloadTests.install(config(b: "https://b1.example/", withC: false), at: path)
        let server = try GatewayProcess(config: path, store: folder.file("store.sqlite"))
        try a.set(.status(503))
        _ = try waitForHealth(server, target: a.url("/"), 0)

        // The reload changes the other destination's URL (so its Locations show the new config is in use)
        // and adds a link with a checked destination.
        try ReloadTests.install(config(b: "https://b2.example/", withC: true), at: path)
        server.signal(SIGHUP)
        var afterReload: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while afterReload.count < 40, Date() < deadline {
            let location = try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()))[header: "Location"] ?? ""
            if !location.hasPrefix("https://b1.example/") { afterReload.append(location) }
        }
        #expect(afterReload.count == 40)
        #expect(afterReload.allSatisfy { $0.hasPrefix("https://b2.example/") }, "a is still down after the reload")
        try c.waitForChecks(atLeast: 1)

        // A reload without a: it is no longer checked (once the reload is logged, and a round in flight
        // then has finished).
        try ReloadTests.install(config(b: "https://b2.example/", withA: false, withC: true), at: path)
        server.signal(SIGHUP)
        try waitForLog(server, "config reloaded", count: 2)
        usleep(600_000)
        let checksThen = try a.checks().count
        usleep(800_000)
        #expect(try a.checks().count == checksThen)
        #expect(server.stop() == 0)
    }
}
