import LinkOutCore

/// An answer made on another thread for a request a loop parked (its responder returned nil): a
/// strict link-out once the writer committed its visit, Apple's notification once verified and stored, a
/// provider's webhook once applied. The one way back to a loop: built where the work ended, written by
/// the loop in the connection's order (`HTTPLoop.deliver`).
struct ParkedReply: Sendable {
    let exchange: Exchange
    var reply: Reply
}

/// The shoppers' loops as the threads that answer through them see them: one mailbox per loop, made
/// before any part that answers there (the writer, the intakes), so no part needs the server to reach a
/// loop. Indexed by the loop that parked the request.
struct LoopMailboxes: Sendable {
    let loops: [HTTPLoop]

    var count: Int { loops.count }

    /// From any thread: `replies` go to `loop`, which writes them at its next wake-up.
    func deliver(_ replies: [ParkedReply], to loop: Int) {
        loops[loop].deliver(replies)
    }

    func deliver(_ reply: ParkedReply, to loop: Int) {
        loops[loop].deliver([reply])
    }
}
