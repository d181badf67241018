import CLibevent

/// A total deadline for receiving each request head, per connection, on one event loop.
///
/// evhttp 2.1 has only an inactivity timeout, which a client trickling a byte every few seconds resets
/// forever (slowloris). This keeps, for every connection of its loop, the time by which the next request
/// head must be in: from the connection's opening, and again from each answer on it; no deadline while a
/// request is being answered. A sweep twice a second closes connections past their deadline.
///
/// evhttp gives no hook when a connection opens, so this creates each connection's bufferevent itself
/// (`evhttp_set_bevcb`) and holds a reference to it, which keeps the struct valid however evhttp disposes
/// of the connection. Once a request has arrived on a connection, its close callback drops that reference
/// as evhttp frees it, so the socket closes at once; a connection that never sent a request is recognised
/// by the sweep (evhttp's bufferevent_free clears every callback) and released there.
final class HeadDeadlines {
    private struct Entry {
        /// Monotonic ms by which the next head must be in; 0 while a request is being answered.
        var deadline: Int64
        /// The connection's close callback is ours: it releases the entry.
        var closeHooked: Bool
    }

    private let timeoutMs: Int64
    /// By bufferevent pointer bits.
    private var entries: [UInt: Entry] = [:]
    private(set) var closedSlowClients = 0

    init(timeoutSeconds: Int) {
        self.timeoutMs = Int64(timeoutSeconds) * 1000
    }

    private static func now() -> Int64 { clibevent_monotonic_us() / 1000 }

    /// For `evhttp_set_bevcb`: a new connection's bufferevent, tracked from now on. CLOSE_ON_FREE as evhttp
    /// itself would ask: the socket is closed when the bufferevent is destroyed, after its events are gone
    /// (closing it earlier would let epoll's change list touch a reused descriptor).
    func newConnection(base: OpaquePointer) -> OpaquePointer? {
        guard let bev = bufferevent_socket_new(base, -1, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else { return nil }
        bufferevent_incref(bev)
        entries[Self.key(bev)] = Entry(deadline: Self.now() + timeoutMs, closeHooked: false)
        return bev
    }

    /// A request head arrived on the connection of `request`: no deadline while it is answered, and the
    /// connection's close now releases the entry.
    func requestStarted(_ request: OpaquePointer) {
        guard let connection = evhttp_request_get_connection(request),
              let bev = evhttp_connection_get_bufferevent(connection) else { return }
        let key = Self.key(bev)
        guard var entry = entries[key] else { return }
        entry.deadline = 0
        if !entry.closeHooked {
            entry.closeHooked = true
            evhttp_connection_set_closecb(connection, { connection, argument in
                guard let connection, let argument else { return }
                Unmanaged<HeadDeadlines>.fromOpaque(argument).takeUnretainedValue().closing(connection)
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        entries[key] = entry
    }

    /// evhttp is freeing the connection: release our reference before it frees the bufferevent.
    private func closing(_ connection: OpaquePointer) {
        guard let bev = evhttp_connection_get_bufferevent(connection) else { return }
        if entries.removeValue(forKey: Self.key(bev)) != nil {
            bufferevent_decref(bev)
        }
    }

    /// The answer on this bufferevent's connection went out: the next head is due within the timeout.
    func answered(_ bev: OpaquePointer?) {
        guard let bev else { return }
        let key = Self.key(bev)
        if entries[key] != nil { entries[key]!.deadline = Self.now() + timeoutMs }
    }

    /// Closes connections past their deadline, and releases those evhttp freed before any request.
    func sweep() {
        let now = Self.now()
        for (key, entry) in entries {
            guard let bev = OpaquePointer(bitPattern: key) else { continue }
            var eventCallback: bufferevent_event_cb?
            var argument: UnsafeMutableRawPointer?
            bufferevent_getcb(bev, nil, nil, &eventCallback, &argument)
            if eventCallback == nil {
                // Freed by evhttp (bufferevent_free clears every callback); only unhooked entries get here.
                entries[key] = nil
                bufferevent_decref(bev)
            } else if entry.deadline != 0, now > entry.deadline, let connection = argument {
                // evhttp's bufferevent callbacks get the connection as their argument.
                closedSlowClients += 1
                if entry.closeHooked {
                    evhttp_connection_free(OpaquePointer(connection)) // `closing` releases the entry
                } else {
                    entries[key] = nil
                    evhttp_connection_free(OpaquePointer(connection))
                    bufferevent_decref(bev)
                }
            }
        }
    }

    /// After evhttp_free (which released the hooked ones through `closing`): drop the rest.
    func releaseAll() {
        for key in entries.keys {
            if let bev = OpaquePointer(bitPattern: key) { bufferevent_decref(bev) }
        }
        entries.removeAll()
    }

    static func bufferevent(of request: OpaquePointer) -> OpaquePointer? {
        guard let connection = evhttp_request_get_connection(request) else { return nil }
        return evhttp_connection_get_bufferevent(connection)
    }

    private static func key(_ bev: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(bev)))
    }
}
