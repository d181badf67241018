import LinkOutCore
import Testing

@testable import LinkOutServer

/// Apple's notification path on the shoppers' responder: what the loop refuses itself, cheaply, before a
/// signature is checked or the intake thread sees anything. The intake is never started here, so whatever
/// reached it would go unanswered.
@Suite struct NotificationPathTests {
    static let path = "/apple/notifications"

    private func fixture(_ settings: String = "") throws -> GatewayFixture {
        // Notifications need reporting (an UNREPORTED one is acted on by a report); nothing is sent here.
        try GatewayFixture(
            extra: #"""
                "notifications": { \#(settings) "path": "\#(Self.path)" },
                "reporting": { "keyFile": "/nonexistent/AuthKey.p8", "keyId": "ABCDEF1234", "issuerId": "57246542-96fe-1a63-e053-0824d011072a" },
                """#)
    }

    @Test func onlyPostIsTakenAndOnlyThereIsABodyRead() throws {
        let fixture = try fixture()
        let get = try #require(try fixture.get(Self.path))
        #expect(get.status == 405 && get.header("Allow") == "POST")
        #expect(get.access.reason == "method_not_allowed")
        #expect(try Ask.bodyLimit(fixture.responder, Wire.request("POST", Self.path, body: [1]), parser: fixture.parser) == 65_536)
        #expect(try Ask.bodyLimit(fixture.responder, Wire.request("GET", Self.path), parser: fixture.parser) == 0)
        #expect(try Ask.bodyLimit(fixture.responder, Wire.request("POST", "/nl", body: [1]), parser: fixture.parser) == 0)
    }

    @Test func aGarbageBodyIsRefusedOnTheLoopWith400() throws {
        let fixture = try fixture()
        let reply = try #require(try fixture.respond(Wire.request("POST", Self.path, body: Array("not json at all".utf8))))
        #expect(reply.status == 400)
        let reason = try #require(reply.access.reason)
        #expect(reply.text == #"{"error":"\#(reason)"}"# + "\n")
        #expect(reply.header("Retry-After") == nil, "Apple need not send it again")
        #expect(fixture.metric(#"linkout_notifications_refused_total{reason="\#(reason)"}"#) == 1)
    }

    @Test func aClientOverTheRateGets429BeforeItsBodyIsRead() throws {
        let fixture = try fixture(#""rateLimit": { "requestsPerSecond": 0.01, "burst": 2 },"#)
        let garbage = Wire.request("POST", Self.path, body: Array("{}".utf8))
        for _ in 0..<2 { #expect(try fixture.respond(garbage, peer: "203.0.113.5")?.status == 400) }
        let limited = try #require(try fixture.respond(garbage, peer: "203.0.113.5"))
        #expect(limited.status == 429 && limited.header("Retry-After") == "1")
        #expect(limited.text == #"{"error":"rate_limited"}"# + "\n")
        #expect(fixture.metric(#"linkout_notifications_refused_total{reason="rate_limited"}"#) == 1)
        #expect(try fixture.respond(garbage, peer: "203.0.113.6")?.status == 400, "another client has its own bucket")
    }

    @Test func aBodyOverTheLimitIs413AndCounted() throws {
        let fixture = try fixture()
        let reply = try Ask.refused(
            fixture.responder, .body(tooLarge: true), Wire.request("POST", Self.path, body: [1, 2, 3]), parser: fixture.parser)
        #expect(reply.status == 413 && reply.access.reason == "body_too_large")
        #expect(fixture.metric(#"linkout_notifications_refused_total{reason="body_too_large"}"#) == 1)
    }
}
