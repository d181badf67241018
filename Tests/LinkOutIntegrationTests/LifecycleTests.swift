import Foundation
import LinkOutTestSupport
import Testing

/// Drain, crash and restart, against the real process.
@Suite struct LifecycleTests {
    @Test func readyzTurns503WhileDrainingThenTheProcessExitsCleanly() throws {
        let server = try GatewayProcess.start(
            links: #"[{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/" }] }]"#,
            extra: #""server": { "drainGraceSeconds": 1.5 },"#)
        let connection = try HTTPConnection(port: server.port)
        #expect(try connection.request("GET", "/readyz").status == 200)
        #expect(try connection.request("GET", "/healthz").status == 200)

        server.signal(SIGTERM)
        let signalled = Date()
        // The signal is handled asynchronously: poll until /readyz reflects it.
        var draining = try connection.request("GET", "/readyz")
        while draining.status == 200, Date().timeIntervalSince(signalled) < 1 {
            Thread.sleep(forTimeInterval: 0.02)
            draining = try connection.request("GET", "/readyz")
        }
        #expect(draining.status == 503)
        #expect(draining.bodyText == "draining\n")
        // Still serving shoppers during the grace period, and still recording before redirecting.
        #expect(try connection.request("GET", "/healthz").status == 200)
        let id = UUID().uuidString.lowercased()
        let during = try connection.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id)))
        #expect(during.status == 302)

        // The grace period runs from the signal: new connections are accepted until it ends, then refused.
        var lastAccepted = Date()
        while Date().timeIntervalSince(signalled) < 5, (try? HTTPConnection(port: server.port).request("GET", "/healthz")) != nil {
            lastAccepted = Date()
            Thread.sleep(forTimeInterval: 0.05)
        }
        let servedFor = lastAccepted.timeIntervalSince(signalled)
        #expect(servedFor >= 1.2 && servedFor < 3.5, "new connections were served for \(servedFor) s of a 1.5 s grace period")
        #expect(server.stop() == 0)
        #expect(try exportTokens(store: server.storePath).map { $0["externalPurchaseId"] as? String } == [id])
        // After the grace period nothing accepts connections any more.
        #expect(throws: (any Error).self) { try HTTPConnection(port: server.port).request("GET", "/healthz") }
    }

    @Test func sigintAlsoDrainsAndExitsZero() throws {
        let server = try GatewayProcess.start()
        #expect(try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302)
        server.signal(SIGINT)
        server.process.waitUntilExit()
        #expect(server.process.terminationStatus == 0)
        #expect(try exportTokens(store: server.storePath).count == 1)
    }

    /// kill -9 under load: every token that received a 302 is in the store after a restart.
    @Test func killNineUnderLoadLosesNoRedirectedToken() throws {
        let folder = TemporaryFolder()
        let store = folder.file("store.sqlite")
        let server = try GatewayProcess(store: store)
        let port = server.port

        let redirected = LockedList()
        let stop = LockedFlag()
        let group = DispatchGroup()
        for worker in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var connection = try? HTTPConnection(port: port, timeoutSeconds: 5)
                while !stop.isSet {
                    let id = UUID().uuidString.lowercased()
                    do {
                        guard let open = connection else { break }
                        let response = try open.request(
                            "GET", TokenBuilder.linkOut(worker % 2 == 0 ? "/nl" : "/de", token: TokenBuilder.minted(id: id)))
                        if response.status == 302 { redirected.append(id) }
                    } catch {
                        // The server died under us: what was in flight got no 302, so it is owed nothing.
                        connection = nil
                        break
                    }
                }
            }
        }
        // Let the load run, then pull the plug with requests in flight.
        let deadline = Date().addingTimeInterval(10)
        while redirected.count < 1500, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        server.crash()
        stop.set()
        group.wait()
        let ids = redirected.snapshot
        #expect(ids.count > 100, "the load produced redirects before the kill")

        // A restart opens the store the crash left behind (WAL and all).
        let restarted = try GatewayProcess(store: store)
        #expect(try restarted.get("/readyz").status == 200)
        #expect(restarted.stop() == 0)
        let stored = Set(try exportTokens(store: store).compactMap { $0["externalPurchaseId"] as? String })
        let missing = ids.filter { !stored.contains($0) }
        #expect(missing.isEmpty, "\(missing.count) of \(ids.count) redirected tokens were lost")
    }
}

final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) {
        lock.lock()
        items.append(item)
        lock.unlock()
    }
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return items.count
    }
    var snapshot: [String] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}

final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

/// Relaxed durability: the 302 goes out before the commit, and the writer still commits everything within
/// its window, and everything queued on a clean stop.
@Suite struct RelaxedDurabilityTests {
    @Test func redirectsBeforeCommitAndStillRecordsEveryVisit() throws {
        let server = try GatewayProcess.start(
            links: #"[{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/" }] }]"#,
            extra: #""durability": { "mode": "relaxed", "commitWindowMs": 200 },"#)
        let connection = try HTTPConnection(port: server.port)
        var ids: [String] = []
        for _ in 0..<300 {
            let id = UUID().uuidString.lowercased()
            let response = try connection.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id)))
            #expect(response.status == 302)
            ids.append(id)
        }
        // Within the window (and then some) the visits are committed while the gateway keeps running.
        let deadline = Date().addingTimeInterval(5)
        var stored: Set<String> = []
        while stored.count < ids.count, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            stored = Set(try exportTokens(store: server.storePath).compactMap { $0["externalPurchaseId"] as? String })
        }
        #expect(stored == Set(ids))
        // A visit queued just before SIGTERM is committed by the drain.
        let last = UUID().uuidString.lowercased()
        #expect(try connection.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: last))).status == 302)
        #expect(server.stop() == 0)
        #expect(try exportTokens(store: server.storePath).contains { $0["externalPurchaseId"] as? String == last })
    }
}

/// Clients that hang up while their visit is being committed: the reply goes nowhere, the record is
/// still kept, and the gateway carries on.
@Suite struct AbandonedRequestTests {
    @Test func clientsClosingBeforeTheRedirectLeaveTheGatewayServing() throws {
        let server = try GatewayProcess.start()
        var ids: [String] = []
        for round in 0..<300 {
            let id = UUID().uuidString.lowercased()
            ids.append(id)
            let connection = try HTTPConnection(port: server.port)
            try connection.sendRaw(
                "GET \(TokenBuilder.linkOut(round % 2 == 0 ? "/nl" : "/fr", token: TokenBuilder.minted(id: id))) HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            // Dropped at once: closed before (or while) the writer commits.
        }
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try server.get("/healthz").status == 200)
        #expect(try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302)
        #expect(server.stop() == 0)
        let stored = Set(try exportTokens(store: server.storePath).compactMap { $0["externalPurchaseId"] as? String })
        // A request read whole is recorded even though nobody waits for its 302.
        #expect(stored.intersection(ids).count == 300, "\(stored.intersection(ids).count) of 300 abandoned visits recorded")
    }
}

/// Signals that arrive while the main thread is not waiting for one (during the drain's grace period)
/// must not fall to a worker thread and kill the process with their default action.
@Suite struct SignalDeliveryTests {
    @Test func aReloadSignalDuringTheDrainDoesNotKillTheProcess() throws {
        let server = try GatewayProcess.start(
            links: #"[{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/" }] }]"#,
            extra: #""server": { "drainGraceSeconds": 1 },"#)
        #expect(try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302)
        server.signal(SIGTERM)
        Thread.sleep(forTimeInterval: 0.3)
        for _ in 0..<5 {
            server.signal(SIGHUP)
            server.signal(SIGTERM)
            Thread.sleep(forTimeInterval: 0.05)
        }
        server.process.waitUntilExit()
        #expect(server.process.terminationReason == .exit, "killed by a signal instead of draining")
        #expect(server.process.terminationStatus == 0)
        #expect(try exportTokens(store: server.storePath).count == 1)
    }
}
