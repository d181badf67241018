import Foundation
import LinkOutCore
import LinkOutStore
import LinkOutTestSupport
import Testing

@testable import LinkOutServer

/// The dashboard's reporting counts are made on their own thread: an ask never waits longer than it said
/// for one, gets the last count while it is fresh, and starts the next one when it is not. A count goes
/// stale when the test moves the clock on, not when it has slept long enough.
@Suite struct ReportingCountsTests {
    /// A count that takes as long as the test says: each call waits for a release, and says which call it was.
    final class Gate: @unchecked Sendable {
        private let condition = NSCondition()
        private var released = 0
        private(set) var calls = 0

        func count() throws -> [UInt8] {
            condition.lock()
            defer { condition.unlock() }
            calls += 1
            let call = calls
            while released < call { condition.wait() }
            if call == 3 { throw CocoaError(.fileReadCorruptFile) }
            return Array("count \(call)".utf8)
        }

        func release() {
            condition.withLock {
                released += 1
                condition.broadcast()
            }
        }

        var callCount: Int { condition.withLock { calls } }
    }

    @Test func aSlowCountIsPendingThenServedThenRecountedOnlyWhenAskedForAStaleOne() throws {
        let gate = Gate()
        let clock = SteppedClock(.system)
        let counts = ReportingCounts(keepAtLeast: 60, firstWait: 0.2, clock: clock.source) { try gate.count() }
        defer { counts.stop() }
        // Whatever failed above, no count is left waiting for its release when the counts stop.
        defer { for _ in 0..<10 { gate.release() } }
        // Nothing is counted before the first ask.
        Thread.sleep(forTimeInterval: 0.1)
        #expect(gate.callCount == 0)

        let started = Date()
        #expect(counts.latest() == .pending)
        #expect(Date().timeIntervalSince(started) < 1, "the first ask waits no longer than firstWait")
        // A second ask during the first count waits only what is left of the first ask's wait: nothing.
        let again = Date()
        #expect(counts.latest() == .pending)
        #expect(Date().timeIntervalSince(again) < 0.1)
        gate.release()
        try waitUntil { counts.latest() == .counted(Array("count 1".utf8)) }

        // Fresh: served as it is, with no new count.
        #expect(counts.latest() == .counted(Array("count 1".utf8)))
        Thread.sleep(forTimeInterval: 0.1)
        #expect(gate.callCount == 1)

        // Stale (after 60 s, or ten times the first count's time): still served at once, and an ask
        // starts the next count.
        clock.advance(ms: 61_000)
        gate.release()
        try waitUntil {
            let latest = counts.latest()
            #expect(latest == .counted(Array("count 1".utf8)) || latest == .counted(Array("count 2".utf8)))
            return latest == .counted(Array("count 2".utf8))
        }
        #expect(gate.callCount == 2)

        // A failed count keeps the last good one.
        clock.advance(ms: 61_000)
        gate.release()
        try waitUntil {
            _ = counts.latest()
            return gate.callCount == 3
        }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(counts.latest() == .counted(Array("count 2".utf8)))
    }

    @Test func aFirstCountThatFailsIsAnErrorNotPending() throws {
        let counts = ReportingCounts(firstWait: 5, clock: .system) { throw CocoaError(.fileReadNoSuchFile) }
        defer { counts.stop() }
        guard case .failed(let message) = counts.latest() else {
            Issue.record("expected the count's error")
            return
        }
        #expect(!message.isEmpty)
    }

    /// The count kept in the store: a fresh one answers the first ask at once and no count is made; an old
    /// one too when counting takes longer than the first ask waits (5 s here; then the next count starts);
    /// an old one of a quick store is left for a count of its own.
    @Test(arguments: [(age: 0.0, took: 0.5), (age: 3_600, took: 30), (age: 3_600, took: 0.5)])
    func theCountKeptInTheStoreAnswersTheFirstAsk(kept: (age: TimeInterval, took: TimeInterval)) throws {
        let gate = Gate()
        let body = Array("kept".utf8)
        let clock = TimeSource.system
        let countedAt = clock.nowMs() - Int64(kept.age * 1000), tookMs = Int64(kept.took * 1000)
        let counts = ReportingCounts(keepAtLeast: 60, firstWait: 5, clock: clock, saved: { (body, countedAt, tookMs) }) { try gate.count() }
        defer { counts.stop() }
        defer { for _ in 0..<3 { gate.release() } }
        switch (kept.age, kept.took) {
        case (0, _):
            #expect(counts.latest() == .counted(body))
            Thread.sleep(forTimeInterval: 0.2)
            #expect(gate.callCount == 0)
            #expect(counts.latest() == .counted(body))
        case (_, 30):
            let asked = Date()
            #expect(counts.latest() == .counted(body))
            #expect(Date().timeIntervalSince(asked) < 2, "no wait for a count of its own")
            gate.release()
            try waitUntil { counts.latest() == .counted(Array("count 1".utf8)) }
        default:
            gate.release()
            #expect(counts.latest() == .counted(Array("count 1".utf8)))
        }
    }

    /// Instances sharing a store (PostgreSQL): when a count is due, one kept by another instance since, and
    /// still fresh, is answered instead of counting again.
    @Test func aFresherCountKeptByAnotherInstanceSparesACount() throws {
        let gate = Gate()
        let other = Locked<(body: [UInt8], countedAt: Int64, tookMs: Int64)?>(nil)
        let clock = SteppedClock(.system)
        let counts = ReportingCounts(keepAtLeast: 60, firstWait: 5, clock: clock.source, saved: { other.withLock { $0 } }) {
            try gate.count()
        }
        defer { counts.stop() }
        defer { for _ in 0..<3 { gate.release() } }
        gate.release()
        #expect(counts.latest() == .counted(Array("count 1".utf8)))
        clock.advance(ms: 61_000)
        other.withLock { $0 = (Array("other".utf8), clock.source.nowMs(), 10) }
        try waitUntil { counts.latest() == .counted(Array("other".utf8)) }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(gate.callCount == 1)
    }

    private func waitUntil(_ condition: () -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: 10)
        while !condition() {
            try #require(Date() < deadline, "timed out")
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}
