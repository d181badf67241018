import CLibevent
import Foundation
import LinkOutCore

/// An evhttp server on a thread and event_base of its own, for the listeners beside the shoppers' (the
/// admin listener, the checkout's API): made, bound, started and stopped in one place.
///
/// Bound as the main listener is, with SO_REUSEPORT, so a new process can start on the same port before
/// the old one stops (the restart with no gap), which `evhttp_bind_socket` does not allow. A base has no
/// locks, so only its own thread may end its loop: `stop` writes to an eventfd the base watches, and the
/// base's thread then steers new connections to the newer process, closes its socket and exits.
final class EvhttpThread: @unchecked Sendable {
    let base: OpaquePointer
    let http: OpaquePointer
    private let name: String
    private let stopFD: Int32
    private var stopEvent: OpaquePointer?
    private let finished = DispatchSemaphore(value: 0)
    /// Set once by `start`, read on the base's thread only after.
    private var handler: ((OpaquePointer) -> Void)?
    /// The listening socket, closed first on stop; the base's thread only, once started.
    private var boundSocket: OpaquePointer?
    private var listener: OpaquePointer?

    /// - Parameter purpose: the listener's name in errors ("admin", "API").
    init(name: String, purpose: String) throws {
        self.name = name
        guard let base = event_base_new() else { throw ServerError("event_base_new failed for the \(purpose) listener") }
        guard let http = evhttp_new(base) else {
            event_base_free(base)
            throw ServerError("evhttp_new failed for the \(purpose) listener")
        }
        let stopFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard stopFD >= 0 else {
            evhttp_free(http)
            event_base_free(base)
            throw ServerError("eventfd failed for the \(purpose) listener")
        }
        self.base = base
        self.http = http
        self.stopFD = stopFD
        evhttp_set_timeout(http, 30)
    }

    deinit {
        // Freed here only if the thread never ran (a bind that failed); its loop frees them otherwise.
        if handler == nil {
            evhttp_free(http)
            close(stopFD)
            event_base_free(base)
        }
    }

    /// Listens on `listen` (`localhost` as 127.0.0.1); returns the port bound.
    func bind(_ listen: ListenAddress, purpose: String) throws -> Int {
        let address = listen.host == "localhost" ? ListenAddress(host: "127.0.0.1", port: listen.port) : listen
        guard let (socketAddress, length) = EventLoop.socketAddress(address) else {
            throw ServerError("cannot parse \(purpose) listen address \(listen): the host must be a numeric IPv4 or IPv6 address")
        }
        var storage = socketAddress
        let listener = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                evconnlistener_new_bind(base, nil, nil, clibevent_listener_flags(), 128, $0, length)
            }
        }
        guard let listener, let bound = evhttp_bind_listener(http, listener) else {
            throw ServerError("cannot listen on \(listen) (\(purpose)): \(String(cString: strerror(errno)))")
        }
        boundSocket = bound
        self.listener = listener
        clibevent_unsteer_reuseport(clibevent_listener_fd(listener))
        return EventLoop.localPort(of: listener)
    }

    /// Starts the thread; `handler` answers each request on it.
    func start(handler: @escaping (OpaquePointer) -> Void) {
        self.handler = handler
        let me = Unmanaged.passUnretained(self).toOpaque()
        evhttp_set_gencb(http, { request, argument in
            guard let request, let argument else { return }
            Unmanaged<EvhttpThread>.fromOpaque(argument).takeUnretainedValue().handler?(request)
        }, me)
        stopEvent = event_new(base, stopFD, Int16(EV_READ), { _, _, argument in
            guard let argument else { return }
            Unmanaged<EvhttpThread>.fromOpaque(argument).takeUnretainedValue().closeAndExit()
        }, me)
        event_add(stopEvent, nil)
        let thread = Thread { [self] in
            event_base_dispatch(base)
            evhttp_free(http)
            if let stopEvent { event_free(stopEvent) }
            close(stopFD)
            event_base_free(base)
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// On the base's thread: steers new connections away, closes the listening socket after a moment (so
    /// the kernel sends new connections to another process sharing the port), then leaves a moment for the
    /// requests already accepted to be answered before the loop exits.
    private func closeAndExit() {
        // As the loops do: new connections go to a newer process's listener (index 1 of the group: this
        // process's is the only older one), and what the kernel queued here is accepted for a moment.
        if let listener { _ = clibevent_steer_reuseport(clibevent_listener_fd(listener), 1) }
        var pause = timeval(tv_sec: 0, tv_usec: 50_000)
        event_base_once(base, -1, Int16(EV_TIMEOUT), { _, _, argument in
            guard let argument else { return }
            let owner = Unmanaged<EvhttpThread>.fromOpaque(argument).takeUnretainedValue()
            if let boundSocket = owner.boundSocket { evhttp_del_accept_socket(owner.http, boundSocket) }
            owner.boundSocket = nil
            owner.listener = nil
            var pause = timeval(tv_sec: 0, tv_usec: 100_000)
            event_base_loopexit(owner.base, &pause)
        }, Unmanaged.passUnretained(self).toOpaque(), &pause)
    }

    /// Asks the thread to stop and waits until it has freed everything.
    func stop() {
        var one: UInt64 = 1
        _ = write(stopFD, &one, 8)
        finished.wait()
    }
}
