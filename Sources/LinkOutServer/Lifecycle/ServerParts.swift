import LinkOutCore
import LinkOutStore

/// The server's parts in the order they start; they stop in the reverse order. The order is the one
/// place that says what depends on what: a part starts after everything it hands work to, and so stops
/// before it (the loops stop first and the writer after everything that records through it). A part that
/// fails to start stops the ones already started, so a failed start leaves no thread behind.
struct ServerParts {
    private(set) var parts: [any ServerPart] = []
    private var started = 0

    mutating func add(_ part: any ServerPart) {
        parts.append(part)
    }

    /// Starts every part in order; throws the first failure, naming the part, after stopping the rest.
    mutating func startAll() throws {
        for part in parts {
            do {
                try part.start()
            } catch {
                stopAll()
                throw ServerError("cannot start \(part.partName): \(error)")
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

    /// The names in starting order, as `serve` starts them (pinned by `LinkOutServerAssemblyTests`).
    var names: [String] { parts.map(\.partName) }
}

/// A listener's part: once it stops, its beacon (`PortSharing`) is withdrawn, so a port freed is not
/// named as served.
final class ListenerPart: ServerPart {
    private let listener: any ServerPart
    private let address: () -> ListenAddress?

    init(_ listener: any ServerPart, address: @escaping () -> ListenAddress?) {
        self.listener = listener
        self.address = address
    }

    var partName: String { listener.partName }
    func start() throws { try listener.start() }
    func stop() {
        listener.stop()
        if let address = address() { PortSharing.withdraw(address) }
    }
}

/// The store's writer as a part. A wrapper of the concrete writer, not a conformance of the generic
/// `RecordWriter`: started through a generic witness, its thread's loop ran unspecialised, looking up type
/// metadata on every commit (~1,100 instructions each, bench/RESULTS.md, issue 36's round).
final class WriterPart: ServerPart {
    private let writer: RecordWriter<ReplyTicket>

    init(_ writer: RecordWriter<ReplyTicket>) { self.writer = writer }

    var partName: String { "the store's writer" }
    func start() { writer.start() }
    /// Commits what is queued, then ends: it stops after everything that records through it.
    func stop() { writer.finish() }
}
