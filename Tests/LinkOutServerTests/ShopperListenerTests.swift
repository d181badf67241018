import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutServer

/// The shoppers' listener and its link-out route asked in-process: requests built from bytes and a peer, the writer played by a
/// journal, no socket. What it answers, what it hands the writer, and what it counts.
@Suite struct ShopperListenerTests {
    @Test func aValidTokenIsRedirectedAfterItsVisitIsQueued() throws {
        let fixture = try GatewayFixture(extra: #""durability": { "mode": "relaxed" },"#)
        let id = UUID().uuidString.lowercased()
        let reply = try #require(try fixture.get(TokenBuilder.linkOut(token: TokenBuilder.minted(id: id))))
        #expect(reply.status == 302)
        let location = try #require(reply.header("Location"))
        #expect(location.hasPrefix("https://a.example.com/nl"), "\(location)")
        #expect(reply.access.route == "nl" && reply.access.externalPurchaseId == id)

        let submitted = fixture.writer.submitted
        try #require(submitted.count == 1)
        guard case .token(let visit) = submitted[0].record else {
            Issue.record("a token's visit, not \(submitted[0].record)")
            return
        }
        #expect(visit.externalPurchaseId == id && visit.link == "nl" && visit.country == "nl")
        #expect(visit.destination == "https://a.example.com/nl")
        #expect(submitted[0].ticket.isAnswered, "relaxed: answered now, nothing waits for the commit")
        #expect(fixture.writer.refusals.isEmpty)
    }

    @Test func strictDurabilityAnswersOnlyAfterTheCommit() throws {
        let fixture = try GatewayFixture()
        let id = UUID().uuidString.lowercased()
        #expect(try fixture.get(TokenBuilder.linkOut(token: TokenBuilder.minted(id: id))) == nil, "answered once committed")
        let visit = try #require(fixture.writer.submitted.first?.ticket.parked, "the request is parked on its loop")
        #expect(visit.loop == 0 && visit.exchange == Exchange(connection: 1, sequence: 0))
        guard case .redirect(let location, nil) = visit.answer else {
            Issue.record("a redirect once committed, not \(visit.answer)")
            return
        }
        #expect(location.hasPrefix("https://a.example.com/nl"))
        #expect(visit.access.externalPurchaseId == id)
    }

    @Test func aFullWriterIsA503AndNothingIsPromised() throws {
        let fixture = try GatewayFixture()
        fixture.writer.accepting = false
        let reply = try #require(try fixture.get(TokenBuilder.linkOut(token: TokenBuilder.minted())))
        #expect(reply.status == 503)
        #expect(reply.header("Retry-After") == "1")
        #expect(reply.access.reason == "store_unavailable")
        #expect(fixture.writer.submitted.isEmpty, "nothing parked")
    }

    @Test func aTokenOfAnotherAppGetsTheRefusalPageAndCountsOnTheDashboard() throws {
        let fixture = try GatewayFixture()
        let reply = try #require(try fixture.get(TokenBuilder.linkOut(token: TokenBuilder.minted(appAppleId: 7))))
        #expect((400..<500).contains(reply.status), "\(reply.status)")
        let reason = try #require(reply.header("X-Linkout-Reason"))
        #expect(reply.header("Location") == nil)
        #expect(reply.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(fixture.writer.submitted.isEmpty, "a refused token is not recorded")
        #expect(fixture.writer.refusals.map(\.link) == ["nl"])
        #expect(fixture.writer.refusals.map(\.reason) == [reason])
    }

    @Test func aValidTokenOnAPathNoLinkServesIsRecordedThen404() throws {
        let id = UUID().uuidString.lowercased()
        // Strict: the 404 page waits for the commit, as a redirect would.
        let strict = try GatewayFixture()
        #expect(try strict.get(TokenBuilder.linkOut("/nl/", token: TokenBuilder.minted(id: id))) == nil)
        let (record, ticket) = try #require(strict.writer.submitted.first)
        guard case .notFound = ticket.parked?.answer else {
            Issue.record("the 404 page once committed, not \(ticket)")
            return
        }
        guard case .token(let visit) = record else {
            Issue.record("a token's visit, not \(record)")
            return
        }
        #expect(visit.externalPurchaseId == id && visit.link == Gateway.unroutedLink && visit.path == "/nl/")
        #expect(strict.metric("linkout_unrouted_tokens_total") == 1)

        // Relaxed: the 404 page at once, the visit queued all the same.
        let relaxed = try GatewayFixture(extra: #""durability": { "mode": "relaxed" },"#)
        let reply = try #require(try relaxed.get(TokenBuilder.linkOut("/nl/", token: TokenBuilder.minted(id: id))))
        #expect(reply.status == 404)
        #expect(reply.header("Location") == nil)
        #expect(reply.access.route == Gateway.unroutedLink && reply.access.externalPurchaseId == id)
        #expect(relaxed.writer.submitted.count == 1)

        // Without a valid token there is nothing to record: a plain 404.
        let plain = try #require(try relaxed.get("/nl/?externalPurchaseToken=junk&bundleId=com.example"))
        #expect(plain.status == 404)
        #expect(relaxed.writer.submitted.count == 1)
    }

    @Test func healthAndReadinessAnswerWithoutTheRules() throws {
        let fixture = try GatewayFixture(readiness: .init(ready: false, why: "draining"))
        let health = try #require(try fixture.get("/healthz"))
        #expect(health.status == 200 && health.text == "ok\n")
        let ready = try #require(try fixture.get("/readyz"))
        #expect(ready.status == 503 && ready.text == "draining\n")
        #expect(fixture.writer.submitted.isEmpty)

        let post = try #require(try fixture.respond(Wire.request("POST", "/nl")))
        #expect(post.status == 405 && post.header("Allow") == "GET, HEAD")
    }

    @Test func aClientOverItsRateGets429BeforeItsTokenIsRead() throws {
        // A stopped clock: however slowly the test runs, the bucket refills only when the clock is moved.
        let clock = SteppedClock(.fixed(TokenBuilder.nowMs))
        let fixture = try GatewayFixture(extra: #""rateLimit": { "requestsPerSecond": 1, "burst": 2 },"#, clock: clock.source)
        for _ in 0..<2 {
            #expect(try fixture.get(TokenBuilder.linkOut(token: TokenBuilder.minted()), peer: "198.51.100.7") == nil)
        }
        let limited = try #require(try fixture.get(TokenBuilder.linkOut(token: TokenBuilder.minted()), peer: "198.51.100.7"))
        #expect(limited.status == 429)
        #expect(limited.header("Retry-After") == "1" && limited.header("X-Linkout-Reason") == "rate_limited")
        #expect(fixture.writer.submitted.count == 2, "the third visit is not recorded")
        // Another client has its own bucket; health checks count against none.
        #expect(try fixture.get(TokenBuilder.linkOut(token: TokenBuilder.minted()), peer: "198.51.100.8") == nil)
        #expect(try fixture.get("/healthz", peer: "198.51.100.7")?.status == 200)
        // A second on, one more visit.
        clock.advance(ms: 1_000)
        #expect(try fixture.get(TokenBuilder.linkOut(token: TokenBuilder.minted()), peer: "198.51.100.7") == nil)
        #expect(try fixture.get(TokenBuilder.linkOut(token: TokenBuilder.minted()), peer: "198.51.100.7")?.status == 429)
    }

    @Test func aBodyIsReadOnlyWhereOneIsExpected() throws {
        let fixture = try GatewayFixture()
        #expect(try Ask.bodyLimit(fixture.responder, Wire.request("POST", "/nl", body: [1]), parser: fixture.parser) == 0)
        let refused = try Ask.refused(fixture.responder, .body(tooLarge: false), Wire.request("GET", "/nl"), parser: fixture.parser)
        #expect(refused.status == 400 && refused.access.reason == HeadProblem.bodyNotAllowed.rawValue)
        let malformed = try Ask.refused(fixture.responder, .head(.bareLF), nil)
        #expect(malformed.status == 400 && malformed.access.reason == HeadProblem.bareLF.rawValue)
    }
}
