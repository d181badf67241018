import Testing

@testable import LinkOutCore

@Suite("ReportBacklog")
struct ReportBacklogTests {
    static let now: Int64 = 1_800_000_000_000
    static let day: Int64 = 86_400_000

    @Test("the rate over five minutes, the time to clear at it, and day 10 of the oldest waiting token")
    func rateAndClearing() {
        let backlog = ReportBacklog(waiting: 30_000, finishedInWindow: 30_000, oldestTokenCreatedAt: Self.now - 9 * Self.day)
        #expect(backlog.ratePerSecond == 100)
        #expect(backlog.clearMs == 300_000)
        #expect(backlog.day10At == Self.now + Self.day)
        #expect(!backlog.passesDay10(now: Self.now))
        #expect(backlog.text(now: Self.now) == "30000 waiting, 100.0 a second over the last 5 minutes, clear in 5m")
    }

    @Test("a warning when at that rate the oldest waiting token is reported after its day 10")
    func passesDay10() {
        // 1,000,000 at 1 a second: 11.6 days; the oldest token was made 2 days ago.
        let backlog = ReportBacklog(waiting: 1_000_000, finishedInWindow: 300, oldestTokenCreatedAt: Self.now - 2 * Self.day)
        #expect(backlog.passesDay10(now: Self.now))
        #expect(backlog.text(now: Self.now).contains("WARNING: at this rate the oldest waiting token's report goes after its day 10"))
    }

    @Test("nothing waiting, or nothing sent: no time to clear and no day-10 warning")
    func quiet() {
        #expect(ReportBacklog(waiting: 0, finishedInWindow: 10, oldestTokenCreatedAt: nil).clearMs == nil)
        let stalled = ReportBacklog(waiting: 5, finishedInWindow: 0, oldestTokenCreatedAt: Self.now - 20 * Self.day)
        #expect(stalled.clearMs == nil && !stalled.passesDay10(now: Self.now))
        #expect(stalled.text(now: Self.now) == "5 waiting, 0.0 a second over the last 5 minutes, none sent in the last 5 minutes")
    }
}
