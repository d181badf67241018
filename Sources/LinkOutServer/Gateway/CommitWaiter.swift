import CoreMetrics
import Foundation
import LinkOutCore
import LinkOutStore

/// A thread that waits, blocking, for its visits' commit, where a loop would be woken: the API thread's
/// registrations. Counts the visits down as the writer's batches commit them.
final class CommitWaiter: @unchecked Sendable {
    private let condition = NSCondition()
    private var remaining: Int
    private var failure: (any Error)?
    /// Its monotonic side times the wait.
    private let clock: TimeSource

    init(count: Int, clock: TimeSource) {
        remaining = count
        self.clock = clock
    }

    /// One visit's batch ended: committed, or failed with `error`.
    func done(_ error: (any Error)?) {
        condition.withLock {
            remaining -= 1
            if let error, failure == nil { failure = error }
            if remaining <= 0 { condition.broadcast() }
        }
    }

    /// Until every visit's batch ended, or `timeout` passed; the first failure, if any.
    func wait(timeout: TimeInterval) throws {
        let deadline = clock.monotonicMilliseconds() + Int64(timeout * 1000)
        try condition.withLock {
            while remaining > 0 {
                let left = deadline - clock.monotonicMilliseconds()
                guard left > 0 else { throw ServerError("the store did not commit within \(Int(timeout)) s") }
                condition.wait(milliseconds: left)
            }
            if let failure { throw failure }
        }
    }
}

extension RecordWriter where Ticket == ReplyTicket {
    /// Records tokens that did not come through a loop (the API's registrations) as a link-out's visit is,
    /// and waits for their commit: when it returns they are committed (or, on PostgreSQL in an outage, in
    /// the spool), the same guarantee a strict redirect has. Throws when the queue is full or closing, or
    /// the commit failed: then the caller answers 503. `counted` counts each token handed over, as a link's
    /// visits are (a failed commit shows as a commit failure). `clock` times the wait.
    func recordAndWait(_ records: [TokenRecord], counted: CoreMetrics.Counter, clock: TimeSource, timeout: TimeInterval = 30) throws {
        let waiter = CommitWaiter(count: records.count, clock: clock)
        for (index, record) in records.enumerated() {
            guard submit(.token(record), ticket: .waiting(waiter)) else {
                // The ones not queued will never be told of: count them off so the wait ends with the others.
                let refused = ServerError("the writer refused the visits (its queue is over server.maxPendingRecords, or it is stopping)")
                for _ in index..<records.count { waiter.done(refused) }
                break
            }
            counted.increment()
        }
        try waiter.wait(timeout: timeout)
    }
}
