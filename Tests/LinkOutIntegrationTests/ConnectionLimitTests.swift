import Foundation
import LinkOutTestSupport
import Testing

/// Out of descriptors, the gateway pauses accepting instead of spinning, keeps serving the connections it
/// has, and accepts again once descriptors are free.
@Suite struct ConnectionLimitTests {
    @Test func runningOutOfDescriptorsPausesAcceptsWithoutSpinning() throws {
        let folder = TemporaryFolder()
        // No head deadline: on a loaded machine (the sanitizer suites) opening the 80 connections can take
        // longer than it, and the first connection would be closed for its silence, not for this test.
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: #"[{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/" }] }]"#,
                extra: #""server": { "requestHeadTimeoutSeconds": 0 },"#))
        // A hard limit of 48 descriptors: linkout can raise its soft limit only that far. One loop: with two,
        // SO_REUSEPORT may queue the first connection at the loop that runs out of descriptors first, and
        // it would never be accepted while the others hold them.
        let server = try GatewayProcess(
            config: config, store: folder.file("store.sqlite"), threads: 1, wrapper: ["/usr/bin/prlimit", "--nofile=48:48"])
        var connections: [HTTPConnection] = []
        // More connections than descriptors: the kernel completes the handshakes, accept() then fails.
        for _ in 0..<80 {
            if let connection = try? HTTPConnection(port: server.port, timeoutSeconds: 2) { connections.append(connection) }
        }
        // The first ones were accepted and are served.
        let first = try #require(connections.first)
        #expect(try first.request("GET", "/healthz").status == 200)

        let before = server.cpuTicks
        Thread.sleep(forTimeInterval: 1)
        let used = server.cpuTicks - before
        #expect(used < 30, "linkout used \(used) ticks of CPU in one second while out of descriptors (spinning?)")
        #expect(server.log.contains("pausing accepts"))

        // Free the descriptors: new connections are accepted again.
        connections.removeAll()
        Thread.sleep(forTimeInterval: 0.5)
        let fresh = try HTTPConnection(port: server.port)
        #expect(try fresh.request("GET", "/healthz").status == 200)
        #expect(try fresh.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302)
    }
}
