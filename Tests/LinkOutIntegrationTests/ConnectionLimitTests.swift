import Foundation
import Testing

/// Out of descriptors, the gateway pauses accepting instead of spinning, keeps serving the connections it
/// has, and accepts again once descriptors are free.
@Suite struct ConnectionLimitTests {
    @Test func runningOutOfDescriptorsPausesAcceptsWithoutSpinning() throws {
        let folder = TemporaryFolder()
        // A hard limit of 48 descriptors: linkout can raise its soft limit only that far.
        let server = try LinkoutServer(store: folder.file("store.sqlite"), wrapper: ["/usr/bin/prlimit", "--nofile=48:48"])
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
        #expect(try fresh.request("GET", Fixtures.linkOut("/nl", token: Fixtures.token())).status == 302)
    }
}
