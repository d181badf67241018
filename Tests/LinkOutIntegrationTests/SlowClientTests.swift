import Foundation
import LinkOutTestSupport
import Testing

/// A client that trickles its request head (each byte resetting evhttp's idle timer) is cut off at the
/// head deadline, while others are served.
@Suite struct SlowClientTests {
    @Test func aTricklingClientIsClosedAtTheHeadDeadline() throws {
        let server = try GatewayProcess.start(
            links: #"[{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/" }] }]"#,
            extra: #""server": { "requestHeadTimeoutSeconds": 1, "idleTimeoutSeconds": 30 },"#)

        let slow = try HTTPConnection(port: server.port, timeoutSeconds: 1)
        try slow.sendRaw("GET /healthz HTTP/1.1\r\nHo")
        let started = Date()
        var closedAfter: TimeInterval?
        // A byte every 250 ms: far inside the idle timeout, never finishing the head.
        while Date().timeIntervalSince(started) < 6 {
            Thread.sleep(forTimeInterval: 0.25)
            // Meanwhile another client is served.
            #expect(try server.get("/healthz").status == 200)
            do {
                try slow.sendRaw("s")
            } catch {
                closedAfter = Date().timeIntervalSince(started)
                break
            }
            if slow.isClosedByPeerWithoutWaiting() {
                closedAfter = Date().timeIntervalSince(started)
                break
            }
        }
        let after = try #require(closedAfter, "the slow client was never cut off")
        #expect(after >= 0.9 && after < 3, "cut off after \(after) s with a 1 s deadline")

        // An ordinary client that answers promptly is untouched by the deadline: two requests 0.5 s apart.
        let connection = try HTTPConnection(port: server.port)
        #expect(try connection.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try connection.request("GET", "/healthz").status == 200)

        let metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
        #expect(
            metrics.contains("linkout_slow_clients_closed_total 1") || metrics.contains("linkout_slow_clients_closed_total 2"),
            "\(metrics.split(separator: "\n").filter { $0.contains("slow") })")
        #expect(server.stop() == 0)
    }
}
