import Foundation
import LinkOutCore
import LinkOutStore

/// The dashboard's reporting counts (`/api/reporting`), counted on a thread of their own and served from
/// the last count.
///
/// Why not on the request: they read every token, 22.7 s over 10 million (bench/RESULTS.md). On the admin
/// thread that was a 22-second page load, and `/metrics` and every other admin request waited behind it.
/// Now the admin thread only hands over the last count, which says when it was made (`at`). The first count
/// starts when the dashboard first asks, and another when it asks for one older than counts are kept: 30 s,
/// or ten times what the last count took, so a large store is not recounted without pause. Nothing is
/// counted while nobody looks.
///
/// The last count is kept in the store (`saved`, see `takeSaved`): a store whose counts are slow answers
/// the first ask after a start with it at once, with its time, and instances sharing a store (PostgreSQL)
/// take each other's fresh counts instead of each making its own.
final class ReportingCounts: @unchecked Sendable {
    /// A count's JSON body, made on the counting thread.
    typealias Count = @Sendable () throws -> [UInt8]
    /// The count kept in the store, when it was made (Unix ms) and how long it took (ms); nil when there is none.
    typealias Saved = @Sendable () throws -> (body: [UInt8], countedAt: Int64, tookMs: Int64)?

    enum Latest: Equatable {
        case counted([UInt8])
        /// The first count has not finished: ask again.
        case pending
        /// No count has succeeded, and the last try failed so.
        case failed(String)
    }

    static let keepAtLeast: TimeInterval = 30

    private let count: Count
    private let saved: Saved
    private let keepAtLeastMs: Int64
    /// How long after the first ask asks wait for the first count before they answer `pending`.
    private let firstWaitMs: Int64
    /// The time of day for a count's time (compared with the counts kept in the store); the monotonic side
    /// for how long a count is kept and how long an ask waits.
    private let clock: TimeSource
    private let worker = PeriodicWorker(name: "linkout-counts", interval: 3_600)
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var body: [UInt8]?
    /// When an ask may start the next count (monotonic ms): a count is answered `keepAtLeast` or ten times
    /// what it took, a failed try waits `keepAtLeast` before the next.
    private var nextCountAt = Int64.min
    private var failure: String?
    /// When the count answered was made (Unix ms; here or, kept in the store, by another instance or run).
    private var bodyCountedAt = Int64.min
    private var asked = false
    private var workerStarted = false
    /// Admin thread only; monotonic ms.
    private var firstAsked: Int64 = 0
    /// The counting thread only.
    private var savedRead = false

    /// - Parameters:
    ///   - keepAtLeast: how long a count is answered before an ask starts the next (tests shorten it).
    ///   - firstWait: how long the first ask after a start waits for a count before it answers `pending`.
    ///   - clock: the admin listener's (`serve`'s one clock).
    init(
        keepAtLeast: TimeInterval = ReportingCounts.keepAtLeast, firstWait: TimeInterval = 1, clock: TimeSource,
        saved: @escaping Saved = { nil }, count: @escaping Count
    ) {
        self.count = count
        self.saved = saved
        self.keepAtLeastMs = Int64(keepAtLeast * 1000)
        self.firstWaitMs = Int64(firstWait * 1000)
        self.clock = clock
    }

    /// Takes the count kept in the store when it is newer than the one answered; true when it is still
    /// fresh (counts are kept `keepAtLeast`, or ten times what they took), so that no count is due: on
    /// PostgreSQL another instance's count spares this one its own. Before any count here, a stale one is
    /// taken too when counting takes longer than a first ask waits (`firstWait`): answered at once with its
    /// time while the next is made. A quicker store's first ask waits for a count of its own instead of
    /// showing an old one. A store that cannot be read now fails the count that follows, which says why.
    private func takeSaved() -> Bool {
        guard let kept = try? saved() else { return false }
        // Its age is on the time of day (another instance or run made it); how long it stays fresh from
        // now, on the monotonic side.
        let freshForMs = kept.countedAt + max(keepAtLeastMs, 10 * kept.tookMs) - clock.nowMs()
        let fresh = freshForMs > 0
        return condition.withLock {
            guard kept.countedAt > bodyCountedAt, fresh || (body == nil && kept.tookMs >= firstWaitMs) else { return false }
            body = kept.body
            bodyCountedAt = kept.countedAt
            nextCountAt = clock.monotonicMilliseconds() + freshForMs
            condition.broadcast()
            return fresh
        }
    }

    private func start() {
        worker.start { [self] in
            let first = !savedRead
            if first {
                savedRead = true
                _ = takeSaved()
            }
            let due = condition.withLock { (body == nil && failure == nil) || (asked && clock.monotonicMilliseconds() >= nextCountAt) }
            guard due else { return false }
            if !first, takeSaved() {
                condition.withLock { asked = false }
                return false
            }
            let countedAt = clock.nowMs(), started = clock.monotonicMilliseconds()
            let result = Result { try count() }
            condition.withLock {
                asked = false
                switch result {
                case .success(let counted):
                    body = counted
                    bodyCountedAt = countedAt
                    nextCountAt = started + max(keepAtLeastMs, 10 * (clock.monotonicMilliseconds() - started))
                    failure = nil
                case .failure(let error):
                    // The last good count, if any, is still answered; the store is tried again when asked
                    // after a pause, not at every ask.
                    failure = "\(error)"
                    nextCountAt = clock.monotonicMilliseconds() + keepAtLeastMs
                }
                condition.broadcast()
            }
            return false
        }
    }

    /// The last count, after waiting up to `firstWait` from the first ask for the first count (so a small
    /// store answers at once after a start). Asks for a new count if this one is older than counts are
    /// kept. Called from one thread (the admin thread).
    func latest() -> Latest {
        let first = condition.withLock {
            defer { workerStarted = true }
            return !workerStarted
        }
        if first {
            firstAsked = clock.monotonicMilliseconds()
            start()
        }
        // Only the first `firstWait` after the first ask waits: later asks during a long first count answer
        // `pending` at once rather than hold the admin thread.
        let deadline = firstAsked + firstWaitMs
        let (latest, stale): (Latest, Bool) = condition.withLock {
            while body == nil, failure == nil {
                let left = deadline - clock.monotonicMilliseconds()
                if left <= 0 { break }
                condition.wait(milliseconds: left)
            }
            let stale = clock.monotonicMilliseconds() >= nextCountAt
            // Only an ask for a stale count starts one: a fresh answer leaves nothing for the worker's
            // hourly round to count.
            if stale { asked = true }
            if let body { return (.counted(body), stale) }
            if let failure { return (.failed(failure), stale) }
            return (.pending, false)
        }
        if stale { worker.wake() }
        return latest
    }

    /// Waits for a count in progress to end. Does nothing if none was ever asked for.
    func stop() {
        worker.stop()
    }
}
