import Foundation
import LinkOutCore

/// The group-commit writer: one thread that takes every visit queued since its last commit, commits them
/// in one transaction (one fsync), then reports the batch's tickets so their redirects can be sent.
///
/// Loop threads only append to the queue under a lock that is never held across disk I/O: the writer
/// swaps the whole queue out and releases the lock before it touches the store. While one batch is being
/// fsynced the next one gathers, so the batch size grows with the load by itself.
public final class RecordWriter<Ticket: Sendable>: @unchecked Sendable {
    /// Called on the writer thread after each batch: the tickets in submission order, and the error if the
    /// batch was not committed (then none of it was).
    public typealias CommitHandler = @Sendable (_ tickets: [Ticket], _ error: (any Error)?) -> Void

    private let store: any TokenStore
    private let maxBatch: Int
    private let maxPending: Int
    private let onCommit: CommitHandler
    private let condition = NSCondition()
    private let finished = DispatchSemaphore(value: 0)

    // Guarded by `condition`.
    private var queue: [(record: VisitRecord, ticket: Ticket)] = []
    private var oldestQueuedAt: UInt64 = 0
    private var closing = false
    private var status = Status()

    /// How the writer is doing, for `/readyz` and logs.
    public struct Status: Sendable, Equatable {
        /// Visits queued or being committed.
        public var pending = 0
        /// Monotonic nanoseconds of the oldest queued visit, or 0 when none is waiting.
        public var oldestPendingSince: UInt64 = 0
        /// The last commit failed (and none has succeeded since).
        public var failing = false
        public var lastError: String?
        public var committedBatches = 0
        public var committedVisits = 0
    }

    public init(store: any TokenStore, maxBatch: Int = 4096, maxPending: Int, onCommit: @escaping CommitHandler) {
        self.store = store
        self.maxBatch = maxBatch
        self.maxPending = maxPending
        self.onCommit = onCommit
    }

    public func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "linkout-writer"
        thread.start()
    }

    /// Queues a visit. False when the queue is full or the writer is closing: the caller answers 503
    /// rather than letting memory grow without bound.
    public func submit(_ record: VisitRecord, ticket: Ticket) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closing, status.pending < maxPending else { return false }
        if queue.isEmpty {
            oldestQueuedAt = DispatchTime.now().uptimeNanoseconds
            condition.signal()
        }
        queue.append((record, ticket))
        status.pending += 1
        if status.oldestPendingSince == 0 { status.oldestPendingSince = oldestQueuedAt }
        return true
    }

    public var currentStatus: Status {
        condition.lock()
        defer { condition.unlock() }
        return status
    }

    /// Commits whatever is queued, stops the thread and closes the store. Visits submitted after this
    /// are refused.
    public func finish() {
        condition.lock()
        closing = true
        condition.signal()
        condition.unlock()
        finished.wait()
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !closing { condition.wait() }
            if queue.isEmpty && closing {
                condition.unlock()
                break
            }
            let batch: ArraySlice<(record: VisitRecord, ticket: Ticket)>
            if queue.count <= maxBatch {
                batch = queue[...]
                queue = []
                queue.reserveCapacity(batch.count)
            } else {
                batch = queue.prefix(maxBatch)
                queue.removeFirst(maxBatch)
            }
            oldestQueuedAt = queue.isEmpty ? 0 : DispatchTime.now().uptimeNanoseconds
            condition.unlock()

            let error = commitWithRetry(batch.map(\.record))

            condition.lock()
            status.pending -= batch.count
            status.oldestPendingSince = status.pending == 0 ? 0 : max(oldestQueuedAt, 1)
            if let error {
                status.failing = true
                status.lastError = String(describing: error)
            } else {
                status.failing = false
                status.committedBatches += 1
                status.committedVisits += batch.count
            }
            condition.unlock()
            onCommit(batch.map(\.ticket), error)
        }
        store.close()
    }

    /// A busy or briefly failing disk gets two more chances before the batch's shoppers get a 503.
    private func commitWithRetry(_ records: [VisitRecord]) -> (any Error)? {
        var lastError: (any Error)?
        for attempt in 0..<3 {
            do {
                try store.commit(records)
                return nil
            } catch {
                lastError = error
                if attempt < 2 { usleep(UInt32(20_000 << attempt)) }
            }
        }
        return lastError
    }
}
