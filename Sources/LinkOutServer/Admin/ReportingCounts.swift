import Foundation
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
    /// The count kept in the store, when it was made and how long it took; nil when there is none.
    typealias Saved = @Sendable () throws -> (body: [UInt8], countedAt: Date, took: TimeInterval)?

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
    private let keepAtLeast: TimeInterval
    /// How long after the first ask asks wait for the first count before they answer `pending`.
    private let firstWait: TimeInterval
    private let worker = PeriodicWorker(name: "linkout-counts", interval: 3_600)
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var body: [UInt8]?
    /// When an ask may start the next count: a count is answered `keepAtLeast` or ten times what it took,
    /// a failed try waits `keepAtLeast` before the next.
    private var nextCountAt = Date.distantPast
    private var failure: String?
    /// When the count answered was made (here or, kept in the store, by another instance or run).
    private var bodyCountedAt = Date.distantPast
    private var asked = false
    private var workerStarted = false
    /// Admin thread only.
    private var firstAsked = Date.distantPast
    /// The counting thread only.
    private var savedRead = false

    /// - Parameters:
    ///   - keepAtLeast: how long a count is answered before an ask starts the next (tests shorten it).
    ///   - firstWait: how long the first ask after a start waits for a count before it answers `pending`.
    init(
        keepAtLeast: TimeInterval = ReportingCounts.keepAtLeast, firstWait: TimeInterval = 1,
        saved: @escaping Saved = { nil }, count: @escaping Count
    ) {
        self.count = count
        self.saved = saved
        self.keepAtLeast = keepAtLeast
        self.firstWait = firstWait
    }

    /// Takes the count kept in the store when it is newer than the one answered; true when it is still
    /// fresh (counts are kept `keepAtLeast`, or ten times what they took), so that no count is due: on
    /// PostgreSQL another instance's count spares this one its own. Before any count here, a stale one is
    /// taken too when counting takes longer than a first ask waits (`firstWait`): answered at once with its
    /// time while the next is made. A quicker store's first ask waits for a count of its own instead of
    /// showing an old one. A store that cannot be read now fails the count that follows, which says why.
    private func takeSaved() -> Bool {
        guard let kept = try? saved() else { return false }
        let freshUntil = kept.countedAt.addingTimeInterval(max(keepAtLeast, 10 * kept.took))
        let fresh = Date() < freshUntil
        return condition.withLock {
            guard kept.countedAt > bodyCountedAt, fresh || (body == nil && kept.took >= firstWait) else { return false }
            body = kept.body
            bodyCountedAt = kept.countedAt
            nextCountAt = freshUntil
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
            let due = condition.withLock { (body == nil && failure == nil) || (asked && Date() >= nextCountAt) }
            guard due else { return false }
            if !first, takeSaved() {
                condition.withLock { asked = false }
                return false
            }
            let started = Date()
            let result = Result { try count() }
            condition.withLock {
                asked = false
                switch result {
                case .success(let counted):
                    body = counted
                    bodyCountedAt = started
                    nextCountAt = started.addingTimeInterval(max(keepAtLeast, 10 * Date().timeIntervalSince(started)))
                    failure = nil
                case .failure(let error):
                    // The last good count, if any, is still answered; the store is tried again when asked
                    // after a pause, not at every ask.
                    failure = "\(error)"
                    nextCountAt = Date().addingTimeInterval(keepAtLeast)
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
        let first = condition.withLock { defer { workerStarted = true }; return !workerStarted }
        if first {
            firstAsked = Date()
            start()
        }
        // Only the first `firstWait` after the first ask waits: later asks during a long first count answer
        // `pending` at once rather than hold the admin thread.
        let deadline = firstAsked.addingTimeInterval(firstWait)
        let (latest, stale): (Latest, Bool) = condition.withLock {
            while body == nil, failure == nil, condition.wait(until: deadline) {}
            let stale = Date() >= nextCountAt
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
