import LinkOutCore
import Testing

/// A connection's deadlines with made-up times: no sockets, no sleeps.
@Suite struct ConnectionLifeTests {
    @Test func aNewConnectionMustFinishItsFirstHeadInTime() {
        var life = ConnectionLife(openedAt: 1_000, headTimeoutMs: 10_000, idleTimeoutMs: 30_000)
        #expect(life.expiry(now: 11_000) == nil)
        // Trickling bytes does not move the deadline.
        life.headBytesArrived(now: 5_000)
        life.headBytesArrived(now: 10_900)
        #expect(life.expiry(now: 11_000) == nil)
        #expect(life.expiry(now: 11_001) == .slowHead)
    }

    @Test func aBodyIsDueWithinTheBodyTimeoutOfItsHeadHoweverItTrickles() {
        var life = ConnectionLife(openedAt: 0, headTimeoutMs: 10_000, idleTimeoutMs: 30_000, bodyTimeoutMs: 2_000)
        life.headBytesArrived(now: 100)
        life.bodyAwaited(now: 9_000)
        // The head's deadline no longer applies; the body's does, and trickling does not move it.
        #expect(life.expiry(now: 10_500) == nil)
        life.headBytesArrived(now: 10_900)
        #expect(life.expiry(now: 11_000) == nil)
        #expect(life.expiry(now: 11_001) == .slowBody)
        // Once the body is whole, the request is being answered: nothing is due.
        life.requestStarted()
        #expect(life.expiry(now: 100_000) == nil)
    }

    @Test func theBodyDeadlineHoldsWithHeadDeadlinesOff() {
        var life = ConnectionLife(openedAt: 0, headTimeoutMs: 0, idleTimeoutMs: 30_000, bodyTimeoutMs: 5_000)
        life.bodyAwaited(now: 1_000)
        life.headBytesArrived(now: 5_000)
        #expect(life.expiry(now: 6_000) == nil)
        #expect(life.expiry(now: 6_001) == .slowBody)
    }

    @Test func nothingIsDueWhileAnswering() {
        var life = ConnectionLife(openedAt: 0, headTimeoutMs: 1_000, idleTimeoutMs: 2_000)
        life.requestStarted()
        life.requestStarted()
        #expect(life.phase == .answering(pending: 2))
        #expect(life.expiry(now: 1_000_000) == nil)
        life.answered(now: 50_000)
        #expect(life.expiry(now: 1_000_000) == nil)
        life.answered(now: 60_000)
        #expect(life.phase == .idle(since: 60_000))
    }

    @Test func afterAnAnswerTheIdleTimeoutRunsThenTheHeadDeadline() {
        var life = ConnectionLife(openedAt: 0, headTimeoutMs: 1_000, idleTimeoutMs: 5_000)
        life.requestStarted()
        life.answered(now: 100)
        // Idle: longer than the head timeout is fine, up to the idle timeout.
        #expect(life.expiry(now: 5_100) == nil)
        #expect(life.expiry(now: 5_101) == .idle)
        // The next head's first byte starts its deadline.
        life.headBytesArrived(now: 3_000)
        #expect(life.expiry(now: 4_000) == nil)
        #expect(life.expiry(now: 4_001) == .slowHead)
    }

    @Test func withoutAHeadDeadlineEveryReadIsActivity() {
        var life = ConnectionLife(openedAt: 0, headTimeoutMs: 0, idleTimeoutMs: 1_000)
        life.headBytesArrived(now: 900)
        life.headBytesArrived(now: 1_800)
        #expect(life.expiry(now: 2_700) == nil)
        #expect(life.expiry(now: 2_801) == .idle)
    }

    @Test func outputTheClientDoesNotReadTimesOut() {
        var life = ConnectionLife(openedAt: 0, headTimeoutMs: 1_000, idleTimeoutMs: 2_000)
        life.requestStarted()
        life.answered(now: 10)
        life.outputBlocked(now: 10)
        // The idle phase alone would expire at 2_010 too; progress moves the write wait on.
        life.outputProgressed(now: 1_500, drained: false)
        #expect(life.expiry(now: 3_400) == .idle)
        life.headBytesArrived(now: 1_600)  // (idle → awaiting head, due 2_600)
        #expect(life.expiry(now: 2_500) == nil)
        life.outputProgressed(now: 2_500, drained: true)
        #expect(life.writeBlockedSince == nil)
        var stalled = ConnectionLife(openedAt: 0, headTimeoutMs: 0, idleTimeoutMs: 2_000)
        stalled.requestStarted()
        stalled.outputBlocked(now: 0)
        #expect(stalled.expiry(now: 2_001) == .stalledWrite)
    }
}
