import Foundation
import LinkOutCore

/// The group-commit writer: one thread that takes every visit queued since its last commit, commits them
/// in one transaction (one fsync), then reports the batch's tickets so their redirects can be sent.
///
/// Loop threads only append to the queue under a lock that is never held across disk I/O: the writer
/// swaps the queue out and releases the lock before it touches the store. While one batch is being
/// fsynced the next one gathers, so the batch size grows with the load by itself.
public final class RecordWriter<Ticket: Sendable>: @unchecked Sendable {
    /// Called on the writer thread after each batch: the tickets in submission order, and the error if the
    /// batch was not committed (then none of it was).
    public typealias CommitHandler = @Sendable (_ tickets: [Ticket], _ outcome: CommitOutcome) -> Void

    /// The visits queued, in submission order: three arrays side by side rather than one of entries, so a
    /// batch hands its records to the store and its tickets to `onCommit` as they are, where mapping entries
    /// copied every record (a retain and a release of each of its strings) and every ticket once more.
    private struct Queue {
        var records: [VisitRecord] = []
        var tickets: [Ticket] = []
        /// Monotonic nanoseconds when each was queued.
        var queuedAt: [UInt64] = []

        var count: Int { records.count }
        var isEmpty: Bool { records.isEmpty }

        mutating func append(_ record: VisitRecord, _ ticket: Ticket, at time: UInt64) {
            records.append(record)
            tickets.append(ticket)
            queuedAt.append(time)
        }

        /// The first `count`, taken out of the queue.
        mutating func take(_ count: Int) -> Queue {
            if count >= records.count {
                let taken = self
                self = Queue()
                records.reserveCapacity(taken.count)
                tickets.reserveCapacity(taken.count)
                queuedAt.reserveCapacity(taken.count)
                return taken
            }
            let taken = Queue(
                records: Array(records.prefix(count)), tickets: Array(tickets.prefix(count)), queuedAt: Array(queuedAt.prefix(count)))
            records.removeFirst(count)
            tickets.removeFirst(count)
            queuedAt.removeFirst(count)
            return taken
        }
    }

    private let store: any TokenStore
    private let maxBatch: Int
    private let clock: TimeSource
    private let maxPending: Int
    private let commitDelayNanoseconds: UInt64
    private let onCommit: CommitHandler
    /// This writer's half of each batch's identity; the other half counts batches (writer thread only).
    public let instanceId = UUID().uuidString.lowercased()
    private var batchSequence: Int64 = 0
    private let condition = NSCondition()
    private let thread = WorkerThread(name: "linkout-writer")

    // Guarded by `condition`.
    private var queue = Queue()
    private var closing = false
    private var committing = 0
    private var committingSince: UInt64 = 0
    private var failing = false
    private var committedVisits = 0
    /// Refusals and health changes for the dashboard, committed with the next batch.
    private var extras = DashboardExtras()
    /// At most this many distinct refusal rows wait for a commit: beyond, new ones are dropped (a flood of
    /// refusals while the store fails must not grow memory without bound).
    private let maxExtraRows = 10_000

    /// How the writer is doing, for `/readyz` and logs.
    public struct Status: Sendable, Equatable {
        /// Visits queued or being committed.
        public var pending: Int
        /// Monotonic nanoseconds of the oldest visit queued or being committed, or 0 when there is none.
        public var oldestPendingSince: UInt64
        /// The last commit failed (and none has succeeded since).
        public var failing: Bool
        public var committedVisits: Int
    }

    /// - Parameters:
    ///   - maxPending: visits queued or in flight beyond which `submit` refuses.
    ///   - commitDelay: how long a visit may wait for others to share its commit. 0 (strict mode) commits
    ///     as soon as anything is queued; the relaxed mode waits to make fewer, larger commits.
    ///   - clock: the server's one clock; `Status.oldestPendingSince` is on its monotonic side, which
    ///     `/readyz` compares with the same clock.
    public init(
        store: any TokenStore, maxBatch: Int = 4096, maxPending: Int, commitDelay: Duration = .zero, clock: TimeSource,
        onCommit: @escaping CommitHandler
    ) {
        self.store = store
        self.clock = clock
        self.maxBatch = maxBatch
        self.maxPending = maxPending
        let (seconds, attoseconds) = commitDelay.components
        self.commitDelayNanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        self.onCommit = onCommit
    }

    public func start() {
        thread.start { [self] in run() }
    }

    /// Queues a visit. False when the queue is full or the writer is closing: the caller answers 503
    /// rather than letting memory grow without bound.
    ///
    /// - Parameter wake: false leaves an idle writer asleep until `wake()`: a loop hands over every visit
    ///   of a burst, then wakes it once, so that the burst shares one commit (below).
    public func submit(_ record: VisitRecord, ticket: Ticket, wake: Bool = true) -> Bool {
        let now = clock.monotonicNanoseconds()
        return condition.withLock {
            guard !closing, queue.count + committing < maxPending else { return false }
            queue.append(record, ticket, at: now)
            if (wake && queue.count == 1) || queue.count == maxBatch { condition.signal() }
            return true
        }
    }

    /// Wakes an idle writer for the visits submitted with `wake: false`.
    ///
    /// Why a loop does not wake it with its burst's first visit: where the writer shares a core with the
    /// loop (bench/run's per-core rows; any host with more busy threads than cores), the scheduler ran the
    /// woken writer at once, in the middle of the loop's burst. Its commit carried the visits read so far
    /// and the rest waited for the next fsync: 17 visits per commit at 32 connections, two fsyncs per
    /// round of answers (bench/RESULTS.md, issue 24's fourth round). A writer already committing takes
    /// whatever is queued when it comes back, woken or not.
    public func wake() {
        condition.withLock {
            if !queue.isEmpty { condition.signal() }
        }
    }

    /// Counts a refused token for the dashboard: no record, nothing waits on it; committed with the next
    /// batch, or within a second when no visit comes. Called from loop threads; a dictionary update under
    /// the lock `submit` takes anyway.
    public func noteRefusal(link: String, reason: String, at ms: Int64) {
        condition.withLock {
            guard !closing, extras.refusals.count < maxExtraRows else { return }
            let wasEmpty = extras.isEmpty
            extras.addRefusal(link: link, reason: reason, at: ms)
            if wasEmpty && queue.isEmpty { condition.signal() }
        }
    }

    /// Records a destination going down or up (the health checker's thread), with the next batch.
    public func noteHealth(target: String, up: Bool, at ms: Int64) {
        condition.withLock {
            guard extras.health.count < maxExtraRows else { return }
            let wasEmpty = extras.isEmpty
            extras.addHealth(target: target, up: up, at: ms)
            if wasEmpty && queue.isEmpty { condition.signal() }
        }
    }

    public var currentStatus: Status {
        condition.withLock {
            let oldest = committing > 0 ? committingSince : (queue.queuedAt.first ?? 0)
            return Status(
                pending: queue.count + committing, oldestPendingSince: oldest, failing: failing,
                committedVisits: committedVisits)
        }
    }

    /// Commits whatever is queued, stops the thread and closes the store. Visits submitted after this
    /// are refused.
    public func finish() {
        condition.withLock {
            closing = true
            condition.signal()
        }
        thread.join()
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !closing {
                // A failed store is probed every second while nothing is queued: otherwise, once /readyz
                // has taken the instance out of rotation, no visit would come to show it works again.
                guard failing else {
                    if extras.isEmpty {
                        condition.wait()
                        continue
                    }
                    // Extras alone wait a second for a batch to ride with, then go on their own.
                    if condition.wait(milliseconds: 1_000) { continue }
                    break
                }
                if condition.wait(milliseconds: 1_000) { continue }
                condition.unlock()
                let recovered = (try? store.probe()) != nil
                condition.lock()
                if recovered { failing = false }
            }
            if queue.isEmpty && closing && extras.isEmpty {
                condition.unlock()
                break
            }
            if queue.isEmpty {
                // Only extras: a commit of their own, no tickets to answer.
                let pending = extras
                extras = DashboardExtras()
                condition.unlock()
                batchSequence += 1
                let error = commitWithRetry([], batch: BatchIdentity(instance: instanceId, sequence: batchSequence), extras: pending)
                condition.lock()
                // Kept for the next try unless the writer is closing (then the counts are lost, as in a crash).
                if error != nil && !closing { extras.merge(pending) }
                condition.unlock()
                if error != nil && !closing { usleep(1_000_000) }
                continue
            }
            // Relaxed mode: let the batch fill until the oldest visit has waited its delay.
            if commitDelayNanoseconds > 0 {
                while !closing, queue.count < maxBatch, let first = queue.queuedAt.first {
                    let due = first + commitDelayNanoseconds
                    let now = clock.monotonicNanoseconds()
                    if now >= due { break }
                    condition.wait(milliseconds: Int64((due - now + 999_999) / 1_000_000))
                }
            }
            let batch = queue.take(maxBatch)
            committing = batch.count
            committingSince = batch.queuedAt[0]
            let pending = extras
            extras = DashboardExtras()
            condition.unlock()

            let started = clock.monotonicNanoseconds()
            batchSequence += 1
            let error = commitWithRetry(
                batch.records, batch: BatchIdentity(instance: instanceId, sequence: batchSequence), extras: pending)
            let elapsed = clock.monotonicNanoseconds() - started

            condition.lock()
            committing = 0
            failing = error != nil
            if failing { extras.merge(pending) } else { committedVisits += batch.count }
            condition.unlock()
            onCommit(batch.tickets, CommitOutcome(error: error, nanoseconds: elapsed))
        }
        store.close()
    }

    /// A busy or briefly failing disk gets two more chances before the batch's shoppers get a 503.
    ///
    /// Every attempt carries the same batch identity: a commit reported failed that did reach the disk or
    /// the server (a lost acknowledgement, an fsync error after the WAL write) is recognised by the store
    /// on the retry, which then adds nothing, so no visit is counted twice.
    private func commitWithRetry(_ records: [VisitRecord], batch: BatchIdentity, extras: DashboardExtras) -> (any Error)? {
        var lastError: (any Error)?
        for attempt in 0..<3 {
            do {
                try store.commit(records, batch: batch, extras: extras, now: clock.nowMs())
                return nil
            } catch {
                lastError = error
                if attempt < 2 { usleep(UInt32(20_000 << attempt)) }
            }
        }
        return lastError
    }
}

/// How one batch's commit went.
public struct CommitOutcome: Sendable {
    /// Why the batch was not committed (after retries); nil when it was.
    public var error: (any Error)?
    /// How long the commit took, retries included.
    public var nanoseconds: UInt64
}
