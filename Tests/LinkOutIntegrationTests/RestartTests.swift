import Foundation
import LinkOutTestSupport
import Testing

/// The restart with no gap the README documents: start the new process on the same addresses (main and
/// admin, both SO_REUSEPORT), then SIGTERM the old one. Clients sending all along see no failed request.
@Suite(.serialized) struct RestartTests {
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var ok = 0
        private(set) var failures: [String] = []
        func add(_ failure: String?) {
            lock.lock()
            if let failure { failures.append(failure) } else { ok += 1 }
            lock.unlock()
        }
        var snapshot: (ok: Int, failures: [String]) {
            lock.lock()
            defer { lock.unlock() }
            return (ok, failures)
        }
    }

    /// One request per connection, as a load balancer's checks and many browsers' first visits are: each
    /// picks a listener anew, so the old process's going away is tested on every request.
    private func client(
        port: Int, stop: LockedFlag, tally: Tally, group: DispatchGroup, target: @escaping @Sendable () -> String, expect status: Int
    ) {
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            while !stop.isSet {
                do {
                    let response = try fetch(port: port, "GET", target())
                    tally.add(response.status == status ? nil : "\(port): status \(response.status)")
                } catch {
                    tally.add("\(port): \(error)")
                }
            }
        }
    }

    @Test func startNewThenStopOldFailsNoRequestOnEitherListener() throws {
        let folder = TemporaryFolder()
        let port = try PreflightTests.freePort(), admin = try PreflightTests.freePort(), api = try PreflightTests.freePort()
        folder.write("api-keys", "checkout \(String(repeating: "0", count: 64))\n")
        // The checkout's API listener too: it is bound and handed over the way the admin listener is.
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: PostgresTests.links, extra: #""api": { "listen": "127.0.0.1:\#(api)", "keysFile": "api-keys" },"#))
        let addresses = ["--listen", "127.0.0.1:\(port)", "--admin-listen", "127.0.0.1:\(admin)"]
        let store = folder.file("store.sqlite")
        let old = try GatewayProcess(config: config, store: store, extraArguments: addresses)
        #expect(old.port == port && old.adminPort == admin)

        let stop = LockedFlag()
        let tally = Tally()
        let group = DispatchGroup()
        client(
            port: port, stop: stop, tally: tally, group: group, target: { TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()) },
            expect: 302)
        client(port: admin, stop: stop, tally: tally, group: group, target: { "/healthz" }, expect: 200)
        client(port: admin, stop: stop, tally: tally, group: group, target: { "/metrics" }, expect: 200)
        client(port: api, stop: stop, tally: tally, group: group, target: { "/healthz" }, expect: 200)
        Thread.sleep(forTimeInterval: 0.5)

        // The new process binds both addresses while the old one holds them.
        let new = try GatewayProcess(config: config, store: store, extraArguments: addresses)
        #expect(new.port == port && new.adminPort == admin)
        Thread.sleep(forTimeInterval: 0.5)
        let beforeStop = tally.snapshot.ok
        #expect(old.stop() == 0)
        Thread.sleep(forTimeInterval: 0.7)
        stop.set()
        group.wait()

        let (ok, failures) = tally.snapshot
        #expect(
            failures.isEmpty,
            "\(failures.count) failed requests of \(ok + failures.count) (main \(port), admin \(admin), api \(api)): \(failures.prefix(5))")
        #expect(ok - beforeStop > 20, "requests went on after the old process stopped (\(ok - beforeStop))")
        #expect(try fetch(port: admin, "GET", "/readyz").bodyText == "ready\n", "the new process answers the admin port")
        #expect(try new.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302)
        #expect(new.stop() == 0)
    }
}
