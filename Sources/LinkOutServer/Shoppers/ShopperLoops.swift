import LinkOutCore
import LinkOutStore
import Logging

extension LoopMailboxes {
    /// The shoppers' loops, one per thread, made first: the writer and the intakes answer through them.
    static func shoppers(count: Int, config: GatewayConfig, clock: TimeSource) throws -> LoopMailboxes {
        LoopMailboxes(loops: try (0..<count).map { _ in try ShopperListener.loop(count: count, config: config, clock: clock) })
    }
}

/// The shoppers' listener as one part: a `ShopperListener` per loop on its own thread, all bound to the
/// same address (SO_REUSEPORT). It starts last and stops first: each loop answers what it has in flight,
/// parked answers included, before the parts those answers come from stop.
final class ShopperLoops: ServerPart {
    let listeners: [ShopperListener]
    private var threads: [WorkerThread] = []
    private var address: ListenAddress?
    /// Says the address is no longer this process's to name (`PortSharing.withdraw`).
    private let released: (ListenAddress) -> Void

    /// `routes(loop)`: that loop's own routes (each keeps its share of the rate limits).
    init(
        mailboxes: LoopMailboxes, serving: ServingState, routes: (Int) -> ShopperRoutes, metrics: GatewayMetrics,
        accessLog: AccessLog?, logger: Logger, released: @escaping (ListenAddress) -> Void
    ) {
        self.released = released
        listeners = mailboxes.loops.enumerated().map { index, http in
            ShopperListener(
                index: index, http: http, serving: serving, routes: routes(index), metrics: metrics, accessLog: accessLog, logger: logger)
        }
    }

    var partName: String { "the event loops" }

    /// Binds every loop to `listen`; returns the port (the kernel's choice for port 0, then shared by all).
    func bind(_ listen: ListenAddress) throws -> ListenAddress {
        var bound = listen
        for listener in listeners {
            let port = try listener.bind(bound)
            bound.port = port
        }
        address = bound
        return bound
    }

    func start() {
        // No dash before the index: with up to 256 loops, `linkout-loop255` still fits the kernel's 15 bytes.
        threads = listeners.map { listener in
            let thread = WorkerThread(name: "linkout-loop\(listener.index)")
            thread.start { listener.run() }
            return thread
        }
    }

    func stop() {
        // Each loop answers what it has in flight, and waits for its parked notifications and webhooks.
        for listener in listeners { listener.requestStop() }
        // Each loop closes its listener 50 ms from now and may then drain for seconds: the port is not
        // this process's to name from here (a newer linkout of the same store already serves it).
        if let address { released(address) }
        for thread in threads { thread.join() }
    }

    /// A reload's new state, to every loop between two requests.
    func install(_ state: ServingState) {
        for listener in listeners { listener.install(state) }
    }
}
