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

    /// Relaxed durability: the redirect went out when the visit was queued; nothing waits for the commit.
    static func answered(loop: Int) -> ReplyTicket {
        ReplyTicket(loop: loop, exchange: nil, location: "", reason: nil, access: nil)
    }

    var isAnswered: Bool { exchange == nil }
}
