import CLibevent
import LinkOutCore

/// Per connection, on one event loop: a total deadline for receiving each request head, and a scan of the
/// raw head bytes for what libevent's parser hides.
///
/// evhttp 2.1 has only an inactivity timeout, which a client trickling a byte every few seconds resets
/// forever (slowloris). This keeps, for every connection of its loop, the time by which the next request
/// head must be in: from the connection's opening, and again from each answer on it; no deadline while a
/// request is being answered. A sweep twice a second closes connections past their deadline. With a
/// timeout of 0 there are no deadlines, and the sweep only releases connections.
///
/// evhttp's parser cuts a line at a NUL byte, merges obs-fold lines and takes a bare LF as a line end, so
/// the parsed request no longer shows them. A callback on each connection's input buffer hands every byte
/// read from the socket to a `RequestHeadScanner` before evhttp's read callback parses it (evbuffer_read
/// runs the buffer's callbacks before the bufferevent's read callback; libevent defers neither here).
/// `requestStarted` then tells whether the head of the request evhttp handed over had a problem.
///
/// evhttp gives no hook when a connection opens, so this creates each connection's bufferevent itself
/// (`evhttp_set_bevcb`) and holds a reference to it, which keeps the struct valid however evhttp disposes
/// of the connection. Once a request has arrived on a connection, its close callback drops that reference
/// as evhttp frees it, so the socket closes at once; a connection that never sent a request is recognised
/// by the sweep (evhttp's bufferevent_free clears every callback) and released there.
final class HeadDeadlines {
    private struct Entry {
        /// Monotonic ms by which the next head must be in; 0 while a request is being answered, or when
        /// there are no deadlines.
        var deadline: Int64
        /// The connection's close callback is ours: it releases the entry.
        var closeHooked: Bool
        /// Requests handed over on this connection so far: the index of the next one's head.
        var requests: UInt32
        /// The connection's scanner (ten bytes, allocated with the connection), and its callback on the
        /// input buffer.
        var scanner: UnsafeMutablePointer<RequestHeadScanner>
        var callback: OpaquePointer?
    }

    /// 0: no deadlines.
    private let timeoutMs: Int64
    /// By bufferevent pointer bits.
    private var entries: [UInt: Entry] = [:]
    private(set) var closedSlowClients = 0

    /// `timeoutSeconds` 0 turns the deadlines off; the raw head scan is always on.
    init(timeoutSeconds: Int) {
        self.timeoutMs = Int64(max(0, timeoutSeconds)) * 1000
    }

    /// Whether answers must be reported with `answered`.
    var hasDeadlines: Bool { timeoutMs > 0 }

    private static func now() -> Int64 { clibevent_monotonic_us() / 1000 }

    /// For `evhttp_set_bevcb`: a new connection's bufferevent, tracked from now on. CLOSE_ON_FREE as evhttp
    /// itself would ask: the socket is closed when the bufferevent is destroyed, after its events are gone
    /// (closing it earlier would let epoll's change list touch a reused descriptor).
    func newConnection(base: OpaquePointer) -> OpaquePointer? {
        guard let bev = bufferevent_socket_new(base, -1, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else { return nil }
        bufferevent_incref(bev)
        let scanner = UnsafeMutablePointer<RequestHeadScanner>.allocate(capacity: 1)
        scanner.initialize(to: RequestHeadScanner())
        let callback = evbuffer_add_cb(bufferevent_get_input(bev), Self.scanInput, scanner)
        entries[Self.key(bev)] = Entry(
            deadline: timeoutMs > 0 ? Self.now() + timeoutMs : 0, closeHooked: false, requests: 0,
            scanner: scanner, callback: callback)
        return bev
    }

    /// The input buffer's callback: runs on every change to it (each read from the socket, and each line
    /// evhttp drains), and scans what was added.
    private static let scanInput: evbuffer_cb_func = { buffer, info, argument in
        guard let buffer, let info, let argument else { return }
        let added = info.pointee.n_added
        guard added > 0 else { return }
        let scanner = argument.assumingMemoryBound(to: RequestHeadScanner.self)
        guard scanner.pointee.problem == nil else { return }
        // What was added is at the end of the buffer (evbuffer_read appends).
        var position = evbuffer_ptr()
        guard evbuffer_ptr_set(buffer, &position, evbuffer_get_length(buffer) - added, EVBUFFER_PTR_SET) == 0 else { return }
        // The added bytes in place, a few chains at a time, from a buffer on the stack.
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: 4) { vectors in
            var remaining = added
            while remaining > 0 {
                let filled = Int(evbuffer_peek(buffer, Int(remaining), &position, vectors.baseAddress, 4))
                guard filled > 0 else { return }
                var scanned = 0
                for vector in vectors.prefix(min(filled, 4)) {
                    let count = min(vector.iov_len, remaining - scanned)
                    scanner.pointee.scan(UnsafeRawBufferPointer(start: vector.iov_base, count: count))
                    scanned += count
                    if scanned == remaining { break }
                }
                remaining -= scanned
                guard scanned > 0, remaining > 0, scanner.pointee.problem == nil,
                      evbuffer_ptr_set(buffer, &position, scanned, EVBUFFER_PTR_ADD) == 0 else { return }
            }
        }
    }

    /// A request head arrived on the connection of `request`: no deadline while it is answered, and the
    /// connection's close now releases the entry. Returns the problem the raw scan found in this request's
    /// head, if any.
    func requestStarted(_ request: OpaquePointer) -> HeadProblem? {
        guard let connection = evhttp_request_get_connection(request),
              let bev = evhttp_connection_get_bufferevent(connection) else { return nil }
        let key = Self.key(bev)
        guard var entry = entries[key] else { return nil }
        let problem = entry.scanner.pointee.problem(forHead: entry.requests)
        entry.requests &+= 1
        entry.deadline = 0
        if !entry.closeHooked {
            entry.closeHooked = true
            evhttp_connection_set_closecb(connection, { connection, argument in
                guard let connection, let argument else { return }
                Unmanaged<HeadDeadlines>.fromOpaque(argument).takeUnretainedValue().closing(connection)
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        entries[key] = entry
        return problem
    }

    /// evhttp is freeing the connection: release our reference before it frees the bufferevent.
    private func closing(_ connection: OpaquePointer) {
        guard let bev = evhttp_connection_get_bufferevent(connection) else { return }
        if let entry = entries.removeValue(forKey: Self.key(bev)) {
            Self.release(bev, entry)
        }
    }

    /// The answer on this bufferevent's connection went out: the next head is due within the timeout.
    func answered(_ bev: OpaquePointer?) {
        guard timeoutMs > 0, let bev else { return }
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
                Self.release(bev, entry)
            } else if entry.deadline != 0, now > entry.deadline, let connection = argument {
                // evhttp's bufferevent callbacks get the connection as their argument.
                closedSlowClients += 1
                if entry.closeHooked {
                    evhttp_connection_free(OpaquePointer(connection)) // `closing` releases the entry
                } else {
                    entries[key] = nil
                    evhttp_connection_free(OpaquePointer(connection))
                    Self.release(bev, entry)
                }
            }
        }
    }

    /// After evhttp_free (which released the hooked ones through `closing`): drop the rest.
    func releaseAll() {
        for (key, entry) in entries {
            if let bev = OpaquePointer(bitPattern: key) { Self.release(bev, entry) }
        }
        entries.removeAll()
    }

    /// Our part of a connection: the scan callback, the scanner, and our reference to the bufferevent.
    private static func release(_ bev: OpaquePointer, _ entry: Entry) {
        if let callback = entry.callback { evbuffer_remove_cb_entry(bufferevent_get_input(bev), callback) }
        entry.scanner.deinitialize(count: 1)
        entry.scanner.deallocate()
        bufferevent_decref(bev)
    }

    static func bufferevent(of request: OpaquePointer) -> OpaquePointer? {
        guard let connection = evhttp_request_get_connection(request) else { return nil }
        return evhttp_connection_get_bufferevent(connection)
    }

    private static func key(_ bev: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(bev)))
    }
}
