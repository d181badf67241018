import Testing

@testable import LinkOutCore

@Suite("SendConcurrency")
struct SendConcurrencyTests {
    static let now: Int64 = 1_760_000_000_000

    @Test("starts at 4 (or the ceiling, if lower) and never passes the ceiling")
    func startsLowUnderTheCeiling() {
        #expect(SendConcurrency(ceiling: 16).limit == 4)
        #expect(SendConcurrency(ceiling: 2).limit == 2)
        #expect(SendConcurrency(ceiling: 0).limit == 1)
        var concurrency = SendConcurrency(ceiling: 16)
        for _ in 0..<100 { concurrency.record(.answered(latencyMs: 100), now: Self.now) }
        #expect(concurrency.limit == 16)
    }

    @Test("grows by one per prompt answer until the first strain, then by about one per window")
    func growth() {
        var concurrency = SendConcurrency(ceiling: 64)
        for _ in 0..<4 { concurrency.record(.answered(latencyMs: 100), now: Self.now) }
        #expect(concurrency.limit == 8)
        concurrency.record(.strained(retryAfterMs: nil), now: Self.now)
        #expect(concurrency.limit == 4)
        // Additive now: about a window's answers (1/4 + 1/4.25 + …) add one.
        for _ in 0..<5 { concurrency.record(.answered(latencyMs: 100), now: Self.now + 5_000) }
        #expect(concurrency.limit == 5)
    }

    @Test("an answer much slower than the fastest stops the growth")
    func slowAnswersDoNotGrow() {
        var concurrency = SendConcurrency(ceiling: 64)
        concurrency.record(.answered(latencyMs: 100), now: Self.now)
        #expect(concurrency.limit == 5)
        for _ in 0..<10 { concurrency.record(.answered(latencyMs: 400), now: Self.now) }
        #expect(concurrency.limit == 5)
        concurrency.record(.answered(latencyMs: 240), now: Self.now)
        #expect(concurrency.limit == 6)
    }

    @Test("429, 5xx and no answer halve it, once per round trip however many say so, never below 1")
    func decrease() {
        var concurrency = SendConcurrency(ceiling: 64)
        for _ in 0..<28 { concurrency.record(.answered(latencyMs: 100), now: Self.now) }
        #expect(concurrency.limit == 32)
        for _ in 0..<10 { concurrency.record(.strained(retryAfterMs: nil), now: Self.now) }
        #expect(concurrency.limit == 16)
        concurrency.record(.noAnswer, now: Self.now + 1_000)
        #expect(concurrency.limit == 8)
        for step in 2..<12 { concurrency.record(.noAnswer, now: Self.now + Int64(step) * 1_000) }
        #expect(concurrency.limit == 1)
        #expect(concurrency.mayStart(inFlight: 0, now: Self.now + 20_000))
    }

    @Test("Retry-After holds every new send, at most a minute; the limit counts what is in flight")
    func retryAfterHolds() {
        var concurrency = SendConcurrency(ceiling: 16)
        #expect(concurrency.mayStart(inFlight: 3, now: Self.now))
        #expect(!concurrency.mayStart(inFlight: 4, now: Self.now))
        concurrency.record(.strained(retryAfterMs: 2_000), now: Self.now)
        #expect(!concurrency.mayStart(inFlight: 0, now: Self.now + 1_999))
        #expect(concurrency.mayStart(inFlight: 0, now: Self.now + 2_000))
        concurrency.record(.strained(retryAfterMs: 3_600_000), now: Self.now)
        #expect(concurrency.holdUntil == Self.now + SendConcurrency.longestHoldMs)
    }
}
