import Foundation
import LinkOutCore
import LinkOutStore
import LinkOutTestSupport
import Testing

/// Collects what the writer reports, for the test thread to wait on.
final class CommitLog: @unchecked Sendable {
    private let condition = NSCondition()
    private(set) var batches: [(tickets: [Int], failed: Bool)] = []

    func add(_ tickets: [Int], failed: Bool) {
        condition.lock()
        batches.append((tickets, failed))
        condition.broadcast()
        condition.unlock()
    }

    func waitForTickets(_ count: Int, timeout: TimeInterval = 10) -> [(tickets: [Int], failed: Bool)] {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while batches.reduce(0, { $0 + $1.tickets.count }) < count, condition.wait(until: deadline) {}
        return batches
    }
}

@Suite struct RecordWriterTests {
    @Test func everyTicketIsReportedOnceAfterItsBatchCommits() throws {
        let store = MemoryTokenStore()
        // Each commit takes 1 ms, as an fsync would: visits queued meanwhile share the next commit.
        store.commitDelayMicroseconds = 1_000
        let log = CommitLog()
        let writer = RecordWriter<Int>(store: store, maxPending: 100_000, clock: .system) { tickets, outcome in
            log.add(tickets, failed: outcome.error != nil)
        }
        writer.start()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in 0..<2_500 {
                #expect(writer.submit(.token(TokenBuilder.record()), ticket: worker * 10_000 + index))
            }
        }
        let batches = log.waitForTickets(10_000)
        writer.finish()
        let tickets = batches.flatMap(\.tickets)
        #expect(tickets.count == 10_000)
        #expect(Set(tickets).count == 10_000)
        #expect(batches.allSatisfy { !$0.failed })
        #expect(try StoreFixtures.tokens(in: store).count == 10_000)
        // Group commit: four threads submitting at once share transactions (a quarter as many at most;
        // around a hundred on an idle machine).
        #expect(store.commits <= 2_500, "\(store.commits) commits for 10,000 visits")
        #expect(writer.currentStatus.pending == 0)
    }

    /// A started writer that has committed ticket 0 (woken by it: the default) and is idle again, waiting
    /// to be woken: one that is not waiting takes whatever is queued when it comes back, woken or not.
    private func idleWriter() -> (MemoryTokenStore, CommitLog, RecordWriter<Int>) {
        let store = MemoryTokenStore()
        let log = CommitLog()
        let writer = RecordWriter<Int>(store: store, maxPending: 1_000, clock: .system) { tickets, outcome in
            log.add(tickets, failed: outcome.error != nil)
        }
        writer.start()
        #expect(writer.submit(.token(TokenBuilder.record()), ticket: 0))
        #expect(log.waitForTickets(1).count == 1)
        Thread.sleep(forTimeInterval: 0.2)
        return (store, log, writer)
    }

    /// A loop hands a burst's visits over without waking the writer, then wakes it once: the burst is one
    /// commit.
    @Test func visitsSubmittedWithoutWakingWaitForWakeAndShareOneCommit() throws {
        let (store, log, writer) = idleWriter()
        for index in 1...10 { #expect(writer.submit(.token(TokenBuilder.record()), ticket: index, wake: false)) }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(log.waitForTickets(0).count == 1, "the writer committed before it was woken")
        #expect(writer.currentStatus.pending == 10)
        writer.wake()
        #expect(log.waitForTickets(11).map(\.tickets) == [[0], Array(1...10)])
        writer.finish()
        #expect(try StoreFixtures.tokens(in: store).count == 11)
    }

    /// Whatever is queued unwoken when the writer finishes is committed, not dropped.
    @Test func visitsNeverWokenForAreCommittedWhenTheWriterFinishes() throws {
        let (store, log, writer) = idleWriter()
        for index in 1...5 { #expect(writer.submit(.token(TokenBuilder.record()), ticket: index, wake: false)) }
        writer.finish()
        #expect(log.waitForTickets(0).map(\.tickets) == [[0], Array(1...5)])
        #expect(try StoreFixtures.tokens(in: store).count == 6)
    }

    @Test func aFailedBatchIsReportedAsFailedAndTheWriterCarriesOn() throws {
        let store = MemoryTokenStore()
        store.failNextCommits = 3  // the first try and both retries
        let log = CommitLog()
        let writer = RecordWriter<Int>(store: store, maxPending: 100, clock: .system) { tickets, outcome in
            log.add(tickets, failed: outcome.error != nil)
        }
        writer.start()
        #expect(writer.submit(.token(TokenBuilder.record()), ticket: 1))
        var batches = log.waitForTickets(1)
        #expect(batches.first?.failed == true)
        #expect(writer.currentStatus.failing)
        #expect(writer.submit(.token(TokenBuilder.record()), ticket: 2))
        batches = log.waitForTickets(2)
        #expect(batches.last?.failed == false)
        #expect(!writer.currentStatus.failing, "one good commit clears the failing state")
        writer.finish()
        #expect(try StoreFixtures.tokens(in: store).count == 1)
    }

    @Test func aBriefFailureIsRetriedWithinTheBatch() throws {
        let store = MemoryTokenStore()
        store.failNextCommits = 1
        let log = CommitLog()
        let writer = RecordWriter<Int>(store: store, maxPending: 100, clock: .system) { tickets, outcome in
            log.add(tickets, failed: outcome.error != nil)
        }
        writer.start()
        #expect(writer.submit(.token(TokenBuilder.record()), ticket: 1))
        #expect(log.waitForTickets(1).first?.failed == false)
        writer.finish()
    }

    @Test func aFullQueueRefusesInsteadOfGrowing() throws {
        let store = MemoryTokenStore()
        let writer = RecordWriter<Int>(store: store, maxPending: 3, clock: .system) { _, _ in }
        // Not started: nothing drains the queue.
        #expect(writer.submit(.token(TokenBuilder.record()), ticket: 1))
        #expect(writer.submit(.token(TokenBuilder.record()), ticket: 2))
        #expect(writer.submit(.token(TokenBuilder.record()), ticket: 3))
        #expect(!writer.submit(.token(TokenBuilder.record()), ticket: 4))
        writer.start()
        writer.finish()
        #expect(try StoreFixtures.tokens(in: store).count == 3, "finish commits what was queued")
        #expect(!writer.submit(.token(TokenBuilder.record()), ticket: 5), "a finished writer refuses")
    }
}

@Suite struct RecordWriterRecoveryTests {
    /// With nothing queued, a failed store is probed until it works, so /readyz can say ready again even
    /// though a load balancer stopped sending traffic.
    @Test func aFailedStoreIsProbedBackToHealthWhileIdle() throws {
        let store = MemoryTokenStore()
        store.failNextCommits = 4  // the batch's three tries, then the first probe
        let log = CommitLog()
        let writer = RecordWriter<Int>(store: store, maxPending: 100, clock: .system) { tickets, outcome in
            log.add(tickets, failed: outcome.error != nil)
        }
        writer.start()
        #expect(writer.submit(.token(TokenBuilder.record()), ticket: 1))
        #expect(log.waitForTickets(1).first?.failed == true)
        #expect(writer.currentStatus.failing)
        let deadline = Date().addingTimeInterval(5)
        while writer.currentStatus.failing, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(!writer.currentStatus.failing, "recovered without any new visit")
        writer.finish()
    }
}
