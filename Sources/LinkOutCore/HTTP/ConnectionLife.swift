/// A connection's life in time, as a value: what it is waiting for, and when waiting becomes a reason to
/// close it. The connection layer tells it what happened, with the time; `expiry` says whether the time
/// is up. No sockets, no clock of its own, so every deadline is tested with made-up times.
///
/// - A new connection must deliver its first head within the head timeout (slowloris: a client trickling
///   a byte now and then never finishes a head; an inactivity timer alone would wait forever).
/// - After an answer it may sit idle for the idle timeout; once the next head's first byte is in, the rest
///   of that head is due within the head timeout.
/// - While requests are being answered nothing is due from the client; output the client does not read
///   for the idle timeout closes the connection.
/// - A head timeout of 0 turns head deadlines off: the idle timeout then runs from every read instead.
/// - A head that announces a body starts the body's own deadline: the whole body is due within the body
///   timeout of the head (a client trickling a body is the slowloris of the paths that read one). It does
///   not depend on the head timeout, so it holds even when head deadlines are off.
public struct ConnectionLife: Sendable, Equatable {
    public enum Phase: Sendable, Equatable {
        /// Nothing of the next head yet, since this time (monotonic ms).
        case idle(since: Int64)
        /// A head is due by this time; `slow`: missing it is a slow client's doing (head deadline), not
        /// plain idleness.
        case awaitingHead(dueBy: Int64, slow: Bool)
        /// A head arrived and its body is due by this time (monotonic ms).
        case awaitingBody(dueBy: Int64)
        /// This many requests are being answered.
        case answering(pending: Int)
    }

    /// Why a connection's time is up.
    public enum Expiry: Sendable, Equatable {
        /// Its head was not complete by the head deadline.
        case slowHead
        /// Nothing came for the idle timeout.
        case idle
        /// Its answers waited for the client to read them for the idle timeout.
        case stalledWrite
        /// A body was not complete by the body deadline.
        case slowBody
    }

    public private(set) var phase: Phase
    /// Since when output has been waiting for the client to read it; nil when nothing waits.
    public private(set) var writeBlockedSince: Int64?
    public let headTimeoutMs: Int64
    public let idleTimeoutMs: Int64
    public let bodyTimeoutMs: Int64

    public init(openedAt now: Int64, headTimeoutMs: Int64, idleTimeoutMs: Int64, bodyTimeoutMs: Int64 = 10_000) {
        self.headTimeoutMs = headTimeoutMs
        self.idleTimeoutMs = idleTimeoutMs
        self.bodyTimeoutMs = max(1, bodyTimeoutMs)
        phase = headTimeoutMs > 0 ? .awaitingHead(dueBy: now + headTimeoutMs, slow: true) : .idle(since: now)
    }

    /// Bytes of a head arrived (not yet a whole head).
    public mutating func headBytesArrived(now: Int64) {
        switch phase {
        case .idle:
            phase = headTimeoutMs > 0 ? .awaitingHead(dueBy: now + headTimeoutMs, slow: true) : .idle(since: now)
        case .awaitingHead:
            // The deadline stands however the bytes trickle in; without one, each read counts as activity.
            if headTimeoutMs == 0 { phase = .idle(since: now) }
        case .awaitingBody, .answering:
            break
        }
    }

    /// A whole head arrived whose body is still to come: the body is due within the body timeout, however
    /// its bytes trickle in.
    public mutating func bodyAwaited(now: Int64) {
        phase = .awaitingBody(dueBy: now + bodyTimeoutMs)
    }

    /// A whole head arrived: its request is being answered.
    public mutating func requestStarted() {
        if case .answering(let pending) = phase {
            phase = .answering(pending: pending + 1)
        } else {
            phase = .answering(pending: 1)
        }
    }

    /// One request's answer was handed to the socket.
    public mutating func answered(now: Int64) {
        guard case .answering(let pending) = phase else { return }
        phase = pending > 1 ? .answering(pending: pending - 1) : .idle(since: now)
    }

    /// The socket took only part of the output: the rest waits for the client to read.
    public mutating func outputBlocked(now: Int64) {
        if writeBlockedSince == nil { writeBlockedSince = now }
    }

    /// The client read some of the waiting output: the wait starts again (all of it written: none waits).
    public mutating func outputProgressed(now: Int64, drained: Bool) {
        writeBlockedSince = drained ? nil : now
    }

    /// Whether the connection should be closed at `now`, and why.
    public func expiry(now: Int64) -> Expiry? {
        if let since = writeBlockedSince, now - since > idleTimeoutMs { return .stalledWrite }
        switch phase {
        case .idle(let since):
            return now - since > idleTimeoutMs ? .idle : nil
        case .awaitingHead(let dueBy, let slow):
            return now > dueBy ? (slow ? .slowHead : .idle) : nil
        case .awaitingBody(let dueBy):
            return now > dueBy ? .slowBody : nil
        case .answering:
            return nil
        }
    }
}
