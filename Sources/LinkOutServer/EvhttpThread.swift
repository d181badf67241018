import CLibevent
import Foundation

/// An evhttp server on a thread and event_base of its own, for the listeners beside the shoppers' (the
/// admin listener, the checkout's API): made, started and stopped in one place.
///
/// A base has no locks, so only its own thread may break its loop: `stop` writes to an eventfd the base
/// watches, and the base's thread then runs `onStop` (which ends the loop, at once or after a drain) and
/// frees what it owns.
final class EvhttpThread: @unchecked Sendable {
    let base: OpaquePointer
    let http: OpaquePointer
    private let name: String
    private let stopFD: Int32
    private var stopEvent: OpaquePointer?
    private let finished = DispatchSemaphore(value: 0)
    /// Set once by `start`, read on the base's thread only after.
    private var handler: ((OpaquePointer) -> Void)?
    private var onStop: (() -> Void)?

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

    /// Starts the thread. `handler` answers each request on it; `onStop` runs on it when `stop` is called
    /// and must end the loop (`event_base_loopbreak` or `loopexit`); the default ends it at once.
    func start(handler: @escaping (OpaquePointer) -> Void, onStop: (() -> Void)? = nil) {
        self.handler = handler
        self.onStop = onStop
        let me = Unmanaged.passUnretained(self).toOpaque()
        evhttp_set_gencb(http, { request, argument in
            guard let request, let argument else { return }
            Unmanaged<EvhttpThread>.fromOpaque(argument).takeUnretainedValue().handler?(request)
        }, me)
        stopEvent = event_new(base, stopFD, Int16(EV_READ), { _, _, argument in
            guard let argument else { return }
            let owner = Unmanaged<EvhttpThread>.fromOpaque(argument).takeUnretainedValue()
            if let onStop = owner.onStop { onStop() } else { event_base_loopbreak(owner.base) }
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

    /// Asks the thread to stop and waits until it has freed everything.
    func stop() {
        var one: UInt64 = 1
        _ = write(stopFD, &one, 8)
        finished.wait()
    }
}
