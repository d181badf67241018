import Foundation
import LinkOutCore
import LinkOutStore

/// An `HTTPLoop` on a thread of its own, for the listeners beside the shoppers' (the admin listener, the
/// checkout's API): made, bound, started and stopped in one place.
///
/// Bound as the shoppers' listener is, with SO_REUSEPORT, so a new process can start on the same port
/// before the old one stops (the restart with no gap): on stop, new connections are steered to the newer
/// process's socket (index 1 of the group: this process's is the only older one) while what the kernel
/// queued here is still accepted and answered.
final class ListenerThread: @unchecked Sendable {
    let loop: HTTPLoop
    private let thread: WorkerThread

    /// Makes the loop (its event_base, not yet listening: `bind`).
    /// - Parameters:
    ///   - purpose: the listener's name in errors ("admin", "API").
    ///   - bodyTimeoutSeconds: how long a request's body may take after its head (the API's bodies; the admin
    ///     listener takes none).
    init(
        name: String, purpose: String, idleTimeoutSeconds: Int = 30, headTimeoutSeconds: Int = 10, bodyTimeoutSeconds: Int = 30,
        clock: TimeSource
    ) throws {
        thread = WorkerThread(name: name)
        loop = try HTTPLoop(
            purpose: purpose, headTimeoutSeconds: headTimeoutSeconds, idleTimeoutSeconds: idleTimeoutSeconds,
            bodyTimeoutSeconds: bodyTimeoutSeconds, steerIndex: 1, parser: RequestHeadParser(), clock: clock)
    }

    /// Listens on `listen`; returns the port bound (the real one for port 0).
    /// - Parameter backlog: connections the kernel queues before they are accepted.
    @discardableResult
    func bind(_ listen: ListenAddress, backlog: Int32 = 128) throws -> Int {
        let address = listen.host == "localhost" ? ListenAddress(host: "127.0.0.1", port: listen.port) : listen
        return try loop.bind(address, backlog: backlog)
    }

    /// Starts the thread; `responder` answers each request on it and must outlive it.
    func start(responder: any HTTPResponder) {
        loop.responder = responder
        thread.start { [loop] in loop.run() }
    }

    /// Asks the thread to stop and waits until it has closed everything.
    func stop() {
        loop.requestStop()
        thread.join()
    }
}
