import LinkOutCore

/// One public path of the shoppers' listener (or, for the link-out, every path no other route names):
/// what it answers, what body it takes, and what it is told when a request on it is refused before it
/// could answer. One instance per loop, on that loop's thread only, so a route keeps its share of a rate
/// limit and its writer wake without locks. A new public path is a new route file in its feature's
/// folder, added to the table `LinkOutServer` builds, not an edit of the listener.
protocol ShopperRoute: AnyObject {
    /// The largest body a `POST` on this route may carry; 0: none.
    func bodyLimit(for request: HTTPRequest) -> Int
    /// The answer now, or nil when the request is parked (the answer comes back through the loop's
    /// mailbox, `LoopMailboxes`). `arrivedMs` is when its head was complete.
    func respond(to request: HTTPRequest, exchange: Exchange, arrivedMs: Int64, on listener: ShopperListener) -> Reply?
    /// A body over `bodyLimit` was refused (413) before `respond`.
    func bodyTooLarge(_ request: HTTPRequest, on listener: ShopperListener)
    /// A body did not arrive within the loop's body deadline: the connection closed.
    func bodyTooSlow(_ request: HTTPRequest, on listener: ShopperListener)
    /// A reload handed the loop `state`, between two requests.
    func install(_ state: ServingState)
    /// Told after each round of the loop's events (`HTTPLoop.afterRound`), when not nil; true while the
    /// route holds work it hands on once a round finds nothing more to do.
    var roundWatch: (() -> Bool)? { get }
}

extension ShopperRoute {
    func bodyLimit(for request: HTTPRequest) -> Int { 0 }
    func bodyTooLarge(_ request: HTTPRequest, on listener: ShopperListener) {}
    func bodyTooSlow(_ request: HTTPRequest, on listener: ShopperListener) {}
    func install(_ state: ServingState) {}
    var roundWatch: (() -> Bool)? { nil }
}

/// A loop's routes: the paths that take a body (Apple's notifications, each provider's webhook), matched
/// exactly, and the link-out, which answers everything else (links, `/healthz`, `/readyz`, 404).
struct ShopperRoutes {
    var exact: [(path: [UInt8], route: any ShopperRoute)]
    var fallback: any ShopperRoute

    /// A few byte comparisons per request: the table holds a notification path and a webhook or two.
    func route(for request: HTTPRequest) -> any ShopperRoute {
        for entry in exact where request.path.elementsEqual(entry.path) { return entry.route }
        return fallback
    }

    var all: [any ShopperRoute] { exact.map(\.route) + [fallback] }
}
