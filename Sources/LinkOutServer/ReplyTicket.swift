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

    /// Relaxed durability: the redirect went out when the visit was queued; nothing waits for the commit.
    static func answered(loop: Int) -> ReplyTicket {
        ReplyTicket(loop: loop, request: 0, location: "", reason: nil)
    }

    var isAnswered: Bool { request == 0 }
}
