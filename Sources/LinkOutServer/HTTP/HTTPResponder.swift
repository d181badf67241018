import LinkOutCore

/// One request on one connection of one loop, as other threads may name it: the writer's tickets and the
/// notification intake carry it back so the loop can answer. A closed connection's exchanges go nowhere.
struct Exchange: Sendable, Hashable {
    let connection: UInt64
    let sequence: UInt32
}

/// What the access log and metrics need of a request once it is answered, kept with the request while
/// the answer is pending (the request's bytes are gone by then).
struct ExchangeFacts: Sendable {
    var method: HTTPMethod?
    /// Wall-clock ms when the head was complete.
    var arrivedMs: Int64
    /// Monotonic µs when the head was complete, for the duration.
    var startedMicroseconds: Int64
    /// The client as the responder resolved it (behind trusted proxies); nil: the peer.
    var client: String?
    var headRequest: Bool { method == .head }
}

/// Why the connection layer refused a request before any responder rule looked at it.
enum RequestRefusal: Sendable, Equatable {
    /// The head broke a rule of `RequestHeadParser`.
    case head(HeadProblem)
    /// A body on a route that takes none, or longer than the route allows (413).
    case body(tooLarge: Bool)
}

/// What a listener's owner answers with: the seam between the connection layer (sockets, parsing, order,
/// deadlines) and the rules. Called on the loop's thread only.
protocol HTTPResponder: AnyObject {
    /// The largest body this request may carry; 0: it may carry none.
    func bodyLimit(for request: HTTPRequest) -> Int
    /// The answer now, or nil when it comes later through `HTTPLoop.answer` (the request is parked: the
    /// loop counts it owed until then). `facts.client` may be set here, once the responder has resolved it.
    func respond(to request: HTTPRequest, exchange: Exchange, facts: inout ExchangeFacts) -> Reply?
    /// The answer to a request refused before `respond` (the connection closes after it). `request` is
    /// there when the head was whole.
    func refused(_ refusal: RequestRefusal, request: HTTPRequest?, facts: inout ExchangeFacts) -> Reply
    /// The one exit: every answer, however it was made, once it is handed to the socket. Counts and logs.
    func answered(_ reply: Reply, facts: ExchangeFacts, peer: @autoclosure () -> String)
    /// A connection is closed for its time running out; `request` is the head whose body did not arrive
    /// (`.slowBody`), valid during the call only.
    func expired(_ expiry: ConnectionLife.Expiry, request: HTTPRequest?)
    /// accept() failed for want of descriptors or memory: accepting pauses for 100 ms.
    func acceptPaused(error: String)
}

extension HTTPResponder {
    func expired(_ expiry: ConnectionLife.Expiry, request: HTTPRequest?) {}
    func acceptPaused(error: String) {}
}
