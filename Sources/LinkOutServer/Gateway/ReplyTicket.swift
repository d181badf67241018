import Foundation
import LinkOutCore

/// What the writer carries for a link-out request while its visit is being committed: enough for the
/// owning loop to answer afterwards.
struct ReplyTicket: Sendable {
    /// The loop thread that owns the request. Only it may answer: connections belong to one thread.
    let loop: Int
    /// The request, on its connection; nil when already answered (relaxed durability).
    let exchange: Exchange?
    let location: String
    /// The refusal reason, when a link sends refused tokens on to its first destination.
    let reason: String?
    /// What the access log line says of the answer.
    let access: ReplyAccess?
    /// An unrouted token with nowhere to send the shopper: the answer, once committed, is the 404 page.
    var notFound = false
    /// The shopper's page language (`ShopperLanguage` index), for a 404 or 503 page sent after the commit.
    var language = 0
    /// A thread waiting for the commit instead of a loop (the API's token registrations); nil for loops.
    var waiter: CommitWaiter?

    /// Relaxed durability: the redirect went out when the visit was queued; nothing waits for the commit.
    static func answered(loop: Int) -> ReplyTicket {
        ReplyTicket(loop: loop, exchange: nil, location: "", reason: nil, access: nil)
    }

    /// A visit someone other than a loop waits for: its commit is told to `waiter`.
    static func waiting(on waiter: CommitWaiter) -> ReplyTicket {
        ReplyTicket(loop: -1, exchange: nil, location: "", reason: nil, access: nil, waiter: waiter)
    }

    var isAnswered: Bool { exchange == nil && waiter == nil }
}

/// A thread that waits, blocking, for its visits' commit, where a loop would be woken: the API thread's
/// registrations. Counts the visits down as the writer's batches commit them.
final class CommitWaiter: @unchecked Sendable {
    private let condition = NSCondition()
    private var remaining: Int
    private var failure: (any Error)?

    init(count: Int) {
        remaining = count
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
        let deadline = Date(timeIntervalSinceNow: timeout)
        try condition.withLock {
            while remaining > 0 {
                guard condition.wait(until: deadline) else { throw ServerError("the store did not commit within \(Int(timeout)) s") }
            }
            if let failure { throw failure }
        }
    }
}
