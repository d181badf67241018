import Foundation
import LinkOutTestSupport
import Testing

/// The notification path is on the public listener: what anyone can send there, against the real binary.
/// Refused cheaply, limited per client, bounded in waiting, counted always, logged at most once a minute.
@Suite(.serialized) struct NotificationAbuseTests {
    /// Who is behind the trusted proxy (the tests' own address): each request can name its client.
    static let proxies = #""proxies": { "trusted": ["127.0.0.1"] },"#
    static let garbage = Array(#"{"signedPayload": "eyJhbGciOiJFUzI1NiJ9.e30.AAAA"}"#.utf8)

    func post(_ server: GatewayProcess, _ body: [UInt8], client: String) throws -> HTTPResponse {
        let connection = try HTTPConnection(port: server.port)
        try connection.sendRaw(
            Array(
                ("POST \(ReportingFixture.notificationPath) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "X-Forwarded-For: \(client)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n").utf8) + body)
        return try connection.readResponse()
    }

    func metrics(_ server: GatewayProcess) throws -> String {
        try fetch(port: server.adminPort, "GET", "/metrics").bodyText
    }

    func logLines(_ server: GatewayProcess, containing parts: [String]) -> Int {
        server.log.split(separator: "\n").filter { line in parts.allSatisfy { line.contains($0) } }.count
    }

    @Test func refusalsAreCountedEveryTimeAndLoggedOncePerMinutePerReasonAndClient() throws {
        let fixture = try ReportingFixture(
            top: Self.proxies, notifications: true, notificationSettings: #""rateLimit": { "requestsPerSecond": 0.01, "burst": 3 },"#)
        // One loop: the rate is split between the loops, and the kernel spreads connections over them.
        let server = try fixture.serve(threads: 1)
        // Three within the client's burst, refused by the screen; the rest refused by the rate, before any
        // decoding, with Retry-After.
        for _ in 0..<3 { #expect(try post(server, Self.garbage, client: "203.0.113.7").status == 400) }
        for _ in 0..<4 {
            let limited = try post(server, Self.garbage, client: "203.0.113.7")
            #expect(limited.status == 429)
            #expect(limited[header: "Retry-After"] == "1")
            #expect(limited.bodyText.contains("rate_limited"))
        }
        // Another client has its own rate and its own log line.
        #expect(try post(server, Self.garbage, client: "198.51.100.9").status == 400)
        let text = try metrics(server)
        #expect(text.contains(#"linkout_notifications_refused_total{reason="malformed_jws"} 4"#), "\(text)")
        #expect(text.contains(#"linkout_notifications_refused_total{reason="rate_limited"} 4"#), "\(text)")
        #expect(server.stop() == 0)
        #expect(
            logLines(server, containing: ["refused a notification", "reason=malformed_jws", "client=203.0.113.7"]) == 1, "\(server.log)")
        #expect(
            logLines(server, containing: ["refused a notification", "reason=rate_limited", "client=203.0.113.7"]) == 1, "\(server.log)")
        #expect(
            logLines(server, containing: ["refused a notification", "reason=malformed_jws", "client=198.51.100.9"]) == 1, "\(server.log)")
    }

    /// A body that arrives slower than `notifications.bodyTimeoutSeconds` is cut off, whatever the head
    /// deadline says, and counted.
    @Test func aBodyTricklingInIsCutOffAtItsDeadline() throws {
        let fixture = try ReportingFixture(notifications: true, notificationSettings: #""bodyTimeoutSeconds": 1,"#)
        let server = try fixture.serve()
        let connection = try HTTPConnection(port: server.port, timeoutSeconds: 5)
        try connection.sendRaw(
            "POST \(ReportingFixture.notificationPath) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 200\r\n\r\n{\"signed")
        let started = Date()
        Thread.sleep(forTimeInterval: 0.5)
        try connection.sendRaw("Payload\": ")
        #expect(connection.isClosedByPeer(), "closed, not answered")
        let waited = Date().timeIntervalSince(started)
        #expect(waited > 0.9 && waited < 3, "closed at the body's deadline, not the head's (10 s): \(waited) s")
        let text = try metrics(server)
        #expect(text.contains(#"linkout_notifications_refused_total{reason="slow_body"} 1"#), "\(text)")
        #expect(text.contains("linkout_slow_clients_closed_total 1"), "\(text)")
        server.stop()
    }

    /// The intake's queue is bounded: what finds it full is answered 503 with Retry-After at once, and
    /// nothing is lost: every notification answered 200 is stored, and the others are when Apple retries.
    @Test func aFullIntakeAnswers503AndWhatItAnswered200IsStoredOnce() throws {
        let fixture = try ReportingFixture(notifications: true, notificationSettings: #""maxQueued": 1,"#)
        let server = try fixture.serve()
        let signer = try NotificationSigner.shared()
        let bodies = (0..<30).map { index in
            NotificationSigner.body(signer.sign(NotificationSigner.payload(subtype: nil, externalPurchaseId: "q-\(index)", type: "TEST")))
        }
        // All on one connection, pipelined: the loop screens and queues them one after the other, far
        // faster than the intake thread verifies and stores one.
        let connection = try HTTPConnection(port: server.port)
        var requests: [UInt8] = []
        for body in bodies {
            requests +=
                Array("POST \(ReportingFixture.notificationPath) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
                + body
        }
        try connection.sendRaw(requests)
        var busy: [Int] = []
        for index in bodies.indices {
            let answer = try connection.readResponse()
            #expect(answer.status == 200 || answer.status == 503, "\(answer.status) \(answer.bodyText)")
            if answer.status == 503 {
                #expect(answer[header: "Retry-After"] == "1")
                busy.append(index)
            }
        }
        #expect(!busy.isEmpty, "a queue of one took all thirty")
        #expect(try metrics(server).contains(#"linkout_notifications_refused_total{reason="busy"} \#(busy.count)"#))
        // Apple sends them again, later, as Retry-After asks: a retry may still find the queue of one
        // taken by another retry's notification, so each is tried until it is answered 200.
        for index in busy {
            var answers: [String] = []
            for _ in 0..<20 {
                let answer = try fixture.notify(server, body: bodies[index])
                answers.append("\(answer.status) \(answer.bodyText)")
                guard answer.status == 503 else { break }
                #expect(answer[header: "Retry-After"] == "1")
                Thread.sleep(forTimeInterval: 0.25)
            }
            #expect(answers.last?.hasPrefix("200 ") == true, "notification \(index): \(answers)")
        }
        #expect(server.stop() == 0)
        let counts = (try fixture.status()["notifications"] as? [String: Any])?["counts"] as? [[String: Any]] ?? []
        #expect(counts.compactMap { $0["count"] as? Int }.reduce(0, +) == 30, "\(counts)")
    }

    /// What checking signatures may cost is bounded for all clients together: a chain not seen before, and
    /// any signature, beyond their budgets are answered 503 with Retry-After without being checked.
    @Test func signatureChecksHaveABudgetForEveryClientTogether() throws {
        let fixture = try ReportingFixture(
            notifications: true, notificationSettings: #""newChainsPerSecond": 0.01, "verificationsPerSecond": 0.1,"#)
        let server = try fixture.serve()
        let signer = try NotificationSigner.shared()
        func test(_ id: String) -> [String: Any] { NotificationSigner.payload(subtype: nil, externalPurchaseId: id, type: "TEST") }
        // The first new chain and the first signature are within their budgets (one of each at once).
        #expect(try fixture.notify(server, signer.sign(test("budget-1"))) == (200, "stored"))
        // A second new chain, right by every name: not checked now.
        let forged = try fixture.notify(server, body: NotificationSigner.body(signer.sign(test("budget-2"), chain: .forgedIntermediate)))
        #expect(forged.status == 503)
        #expect(forged[header: "Retry-After"] == "1")
        #expect(forged.bodyText.contains("new_chains_limited"))
        // The known chain needs no chain check, but its signature is over the budget too.
        #expect(try fixture.notify(server, signer.sign(test("budget-3"))) == (503, "verifications_limited"))
        let text = try metrics(server)
        #expect(text.contains(#"linkout_notifications_refused_total{reason="new_chains_limited"} 1"#), "\(text)")
        #expect(text.contains(#"linkout_notifications_refused_total{reason="verifications_limited"} 1"#), "\(text)")
        #expect(text.contains("linkout_notification_chains_verified_total 1"), "\(text)")
        server.stop()
    }

    /// Apple signs with one chain for a long time: its signatures are checked once, and a forgery with a
    /// foreign chain never gets as far as a signature.
    @Test func aChainIsVerifiedOnceAndAForeignOneNever() throws {
        let fixture = try ReportingFixture(notifications: true)
        let server = try fixture.serve()
        let signer = try NotificationSigner.shared()
        for index in 0..<3 {
            let jws = signer.sign(NotificationSigner.payload(subtype: nil, externalPurchaseId: "once-\(index)", type: "TEST"))
            #expect(try fixture.notify(server, jws) == (200, "stored"))
            let forged = signer.sign(
                NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "forged-\(index)"), chain: .otherRoot)
            #expect(try fixture.notify(server, forged) == (400, "untrusted_chain"))
        }
        #expect(
            try fixture.notify(
                server, signer.sign(NotificationSigner.payload(subtype: nil, externalPurchaseId: "x", type: "TEST"), tamper: true))
                == (400, "bad_signature"))
        let text = try metrics(server)
        #expect(text.contains("linkout_notification_chains_verified_total 1"), "\(text)")
        #expect(text.contains(#"linkout_notifications_refused_total{reason="untrusted_chain"} 3"#), "\(text)")
        server.stop()
    }
}
