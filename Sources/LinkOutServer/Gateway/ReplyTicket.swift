import LinkOutCore

/// What the writer carries with each visit until its batch commits: who waits for it, and how to answer.
enum ReplyTicket: Sendable {
    /// Relaxed durability: the redirect went out when the visit was queued; nothing waits for the commit.
    case answered
    /// Strict durability: the shopper's request waits on its loop for the commit.
    case parked(ParkedVisit)
    /// A thread waits instead of a loop (the API's token registrations, `RecordWriter.recordAndWait`).
    case waiting(CommitWaiter)
}

/// A strict link-out parked until its visit is committed: enough to answer it from the writer's thread
/// (`CommitDelivery`) once the batch ends.
struct ParkedVisit: Sendable {
    /// The loop thread that owns the request. Only it may write the answer: connections belong to one thread.
    let loop: Int
    let exchange: Exchange
    let answer: Answer
    /// What the access log line and the counters say of the answer.
    let access: ReplyAccess
    /// The shopper's page language (`ShopperLanguage` index), for a 404 or 503 page.
    let language: Int

    /// What a committed visit is answered with.
    enum Answer: Sendable {
        /// The `302` (`reason`: the refusal, when a link sends refused tokens on to its first destination).
        case redirect(location: String, reason: String?)
        /// An unrouted token with nowhere to send the shopper: the 404 page.
        case notFound
    }
}
