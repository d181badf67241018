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
final class ReportingCounts: @unchecked Sendable {
    /// A count's JSON body, made on the counting thread.
    typealias Count = @Sendable () throws -> [UInt8]

    enum Latest: Equatable {
        case counted([UInt8])
        /// The first count has not finished: ask again.
        case pending
        /// No count has succeeded, and the last try failed so.
        case failed(String)
    }

    static let keepAtLeast: TimeInterval = 30

    private let count: Count
    private let keepAtLeast: TimeInterval
    private let worker = PeriodicWorker(name: "linkout-counts", interval: 3_600)
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var body: [UInt8]?
    private var countedAt = Date.distantPast
    private var keepFor: TimeInterval
    private var failure: String?
    private var asked = false
    private var started = false

    /// - Parameter keepAtLeast: how long a count is answered before an ask starts the next (tests shorten it).
    init(keepAtLeast: TimeInterval = ReportingCounts.keepAtLeast, count: @escaping Count) {
        self.count = count
        self.keepAtLeast = keepAtLeast
        keepFor = keepAtLeast
    }

    private func start() {
        worker.start { [self] in
            let due = condition.withLock { body == nil || (asked && Date().timeIntervalSince(countedAt) >= keepFor) }
            guard due else { return false }
            let started = Date()
            let result = Result { try count() }
            condition.withLock {
                asked = false
                switch result {
                case .success(let counted):
                    body = counted
                    countedAt = started
                    keepFor = max(keepAtLeast, 10 * Date().timeIntervalSince(started))
                    failure = nil
                case .failure(let error):
                    failure = "\(error)"
                    // A failed count is tried again when next asked, not at once in a loop.
                    if body == nil { countedAt = Date() }
                }
                condition.broadcast()
            }
            return false
        }
    }

    /// The last count, after waiting up to `wait` for the first one (so a small store answers at once after
    /// a start). Asks for a new count if this one is older than the counts are kept.
    func latest(waitingUpTo wait: TimeInterval) -> Latest {
        let deadline = Date(timeIntervalSinceNow: wait)
        let first = condition.withLock { defer { started = true }; return !started }
        if first { start() }
        let (latest, stale): (Latest, Bool) = condition.withLock {
            while body == nil, failure == nil, condition.wait(until: deadline) {}
            asked = true
            let stale = Date().timeIntervalSince(countedAt) >= keepFor
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
