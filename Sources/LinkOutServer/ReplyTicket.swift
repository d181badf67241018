/// What the writer carries for a link-out request while its visit is being committed: enough for the
/// owning loop to send the redirect afterwards.
struct ReplyTicket: Sendable {
    /// The loop thread that owns the request. Only it may reply: a cross-thread reply into evhttp is a crash.
    let loop: Int
    /// The `evhttp_request*`, as bits, because a pointer is not `Sendable`. Only the owning loop turns it
    /// back into a pointer.
    let request: UInt
    let location: String
    /// The refusal reason, when a link sends refused tokens on to its first destination.
    let reason: String?
    /// For the access log line written when the reply goes out.
    let access: PendingAccess?
    /// An unrouted token with nowhere to send the shopper: the answer, once committed, is the 404 page.
    var notFound = false
    /// The shopper's page language (`ShopperLanguage` index), for a 404 or 503 page sent after the commit.
    var language = 0

    /// Relaxed durability: the redirect went out when the visit was queued; nothing waits for the commit.
    static func answered(loop: Int) -> ReplyTicket {
        ReplyTicket(loop: loop, request: 0, location: "", reason: nil, access: nil)
    }

    var isAnswered: Bool { request == 0 }
}

/// What the access log needs of a request whose reply waits for the writer.
struct PendingAccess: Sendable {
    let arrivedMs: Int64
    let startedMicroseconds: Int64
    let method: String
    let route: String
    let externalPurchaseId: String?
    let destination: String
    /// nil for a shopper's visit.
    let kind: String?
    let client: String
}
