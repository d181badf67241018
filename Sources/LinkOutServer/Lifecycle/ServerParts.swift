/// One part of the running server with a life of its own (a thread, a listener, a queue), as the server
/// lists it: a name for the operator's messages, how it starts and how it stops.
struct ServerPart {
    var name: String
    var start: () throws -> Void
    var stop: () -> Void
}

/// The server's parts in the order they start; they stop in the reverse order. The order is the one
/// place that says what depends on what: a part starts after everything it hands work to, and so stops
/// before it (the loops stop first and the writer after everything that records through it). A part that
/// fails to start stops the ones already started, so a failed start leaves no thread behind.
struct ServerParts {
    private var parts: [ServerPart] = []
    private var started = 0

    mutating func add(_ name: String, start: @escaping () throws -> Void, stop: @escaping () -> Void) {
        parts.append(ServerPart(name: name, start: start, stop: stop))
    }

    /// Starts every part in order; throws the first failure, naming the part, after stopping the rest.
    mutating func startAll() throws {
        for part in parts {
            do {
                try part.start()
            } catch {
                stopAll()
                throw ServerError("cannot start \(part.name): \(error)")
            }
            started += 1
        }
    }

    /// Stops what started, last first. Safe to call twice: the second call finds nothing started.
    mutating func stopAll() {
        while started > 0 {
            started -= 1
            parts[started].stop()
        }
    }

    /// The names in starting order, for the docs and tests that pin the order.
    var names: [String] { parts.map(\.name) }
}

/// The way back to the server for the parts its initialiser builds before the server exists: set at the
/// end of `LinkOutServer.init`, weak so the parts' closures never keep the server alive.
final class ServerHandle: @unchecked Sendable {
    weak var server: LinkOutServer?
}
