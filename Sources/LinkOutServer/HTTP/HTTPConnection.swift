import Glibc
import LinkOutCore

/// One accepted socket's state on its loop: the bytes received and not yet consumed, the parser's place in
/// them, the requests being answered in arrival order, and output the socket has not taken yet. The loop
/// (`HTTPLoop`) does the reading and writing; this holds what lives between two callbacks.
///
/// Its variables are `@exclusivity(unchecked)`: only its loop's thread ever touches them, one callback at a
/// time, and the runtime's access checks on every read and write of a class's variable were 4 % of the
/// loop's instructions (callgrind). The compiler's static checks still apply; only the run-time ones are
/// skipped, which could catch nothing here that the one-thread rule does not already rule out.
final class HTTPConnection: PeerAddress {
    let id: UInt64
    let fd: Int32
    /// The peer's address, as text once asked for.
    let address: sockaddr_storage
    private(set) lazy var peer: String = SocketAddress.text(address)
    /// The loop that owns it, for the C callbacks, which are handed only the connection.
    unowned(unsafe) var owner: HTTPLoop?
    /// Whether requests are read, and how the connection ends; its deadlines are `life`'s.
    @exclusivity(unchecked) var state = State.reading
    @exclusivity(unchecked) var readEvent: OpaquePointer?
    @exclusivity(unchecked) var writeEvent: OpaquePointer?
    /// TCP_NODELAY is set (`HTTPLoop.send`).
    @exclusivity(unchecked) var noDelay = false

    // Input: `input[start..<count]` is received and not yet consumed; a head is parsed from `start`.
    @exclusivity(unchecked) private(set) var input: UnsafeMutableRawPointer
    @exclusivity(unchecked) private(set) var capacity: Int
    @exclusivity(unchecked) var start = 0
    @exclusivity(unchecked) var count = 0
    @exclusivity(unchecked) var parser: RequestHeadParser

    @exclusivity(unchecked) var life: ConnectionLife

    /// Requests answered or being answered, oldest first: `sequence` of the first is `firstSequence`.
    /// Answers leave strictly in this order, whichever is ready first.
    @exclusivity(unchecked) var slots: [Slot] = []
    @exclusivity(unchecked) var firstSequence: UInt32 = 0
    var nextSequence: UInt32 { firstSequence &+ UInt32(slots.count) }

    struct Slot {
        var facts: ExchangeFacts
        var keepAlive: Bool
        var http10: Bool
        var reply: Reply?

        /// Whether its answer is made, read in place: `slots[i].reply != nil` copied the whole reply first.
        var isAnswered: Bool {
            if case .some = reply { return true }
            return false
        }
    }

    /// Output the socket did not take yet, sent before anything newer.
    @exclusivity(unchecked) var pendingOutput: [UInt8] = []

    /// A connection's states on its loop, one at a time, each with what only it needs. `HTTPLoop` moves
    /// it along: reading ⇄ readingBody, reading ⇄ paused, then closing → lingering → closed (or straight
    /// to closed, from any).
    enum State {
        /// Heads are read, parsed and dispatched as they arrive.
        case reading
        /// A whole head is in whose body is still arriving: it is dispatched once the body is whole.
        case readingBody(RequestHead)
        /// `maxPipelined` answers are pending: the read event is off until half of them have left.
        case paused
        /// No more requests are read: the last one said `Connection: close`, a head was refused, or the
        /// client closed its side. What the client still sends is read and dropped, so it cannot grow
        /// memory; once every pending answer is written the connection closes (`HTTPLoop.finish`).
        /// `unreadBody`: a body was still due when reading stopped; its deadline is still reported.
        case closing(unreadBody: RequestHead?)
        /// The write side is shut: input is read and dropped until the client closes or this time
        /// (monotonic ms) passes, so a client still sending never gets a reset that could destroy the
        /// answer in flight.
        case lingering(until: Int64)
        /// Its descriptor is gone and late answers for it are dropped.
        case closed
    }

    var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// Heads are read and parsed: not paused, not closing.
    var readsRequests: Bool {
        switch state {
        case .reading, .readingBody: true
        case .paused, .closing, .lingering, .closed: false
        }
    }

    /// Whether the output being written is the last this connection will have: it closes once that is
    /// out, and no answer waits for its turn.
    var isLastWrite: Bool {
        switch state {
        case .closing: slots.isEmpty
        case .lingering, .closed: true
        case .reading, .readingBody, .paused: false
        }
    }

    /// The head whose body has not arrived, if any: the one a body deadline is about.
    var headAwaitingBody: RequestHead? {
        switch state {
        case .readingBody(let head): head
        case .closing(let head): head
        case .reading, .paused, .lingering, .closed: nil
        }
    }

    static let initialCapacity = 2048

    init(id: UInt64, fd: Int32, address: sockaddr_storage, parser: RequestHeadParser, life: ConnectionLife) {
        self.id = id
        self.fd = fd
        self.address = address
        self.parser = parser
        self.life = life
        capacity = Self.initialCapacity
        input = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        input.deallocate()
    }

    /// What a responder reads: everything from the current head's start.
    var unconsumed: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: input + start, count: count - start) }

    /// Room for at least `free` more bytes after `count`, moving what is unconsumed to the front first and
    /// growing (doubling) only if that is not enough. The parser's offsets are relative to `start`, so a
    /// move keeps them true.
    func reserve(free: Int) {
        if capacity - count >= free { return }
        if start > 0 {
            let live = count - start
            if live > 0 { memmove(input, input + start, live) }
            start = 0
            count = live
            if capacity - count >= free { return }
        }
        var newCapacity = capacity
        while newCapacity - count < free { newCapacity *= 2 }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        grown.copyMemory(from: input, byteCount: count)
        input.deallocate()
        input = grown
        capacity = newCapacity
    }

    /// Consumes `length` bytes from `start` (one request).
    func consume(_ length: Int) {
        start += length
        if start == count {
            start = 0
            count = 0
        }
    }

    var freeSpace: Int { capacity - count }
    var writePointer: UnsafeMutableRawPointer { input + count }

    /// Whether anything of a next head has arrived.
    var hasUnconsumedInput: Bool { count > start }
}
