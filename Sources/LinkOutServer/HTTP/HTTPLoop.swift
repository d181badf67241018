import CLibevent
import Foundation
import Glibc
import LinkOutCore
import LinkOutStore

/// One thread's HTTP/1.1 server on libevent: an event_base, an SO_REUSEPORT listener, and its connections,
/// read and written directly with read(2) and write(2) from libevent's readiness callbacks. The rules are
/// the responder's; this layer owns the bytes: it parses heads (`RequestHeadParser`), reads bounded bodies,
/// keeps answers in request order however late each is made (pipelining), enforces each connection's
/// deadlines (`ConnectionLife`), and writes every answer through one exit.
///
/// Everything runs on the loop's thread except `post` and `requestStop`, which other threads use to hand
/// it work through a mailbox and an eventfd. So the variables only that thread touches skip the runtime's
/// exclusivity checks, as `HTTPConnection`'s do (and for the same reason).
final class HTTPLoop: @unchecked Sendable {
    let base: OpaquePointer
    /// Set by the owner before `run`; outlives the loop.
    unowned(unsafe) var responder: (any HTTPResponder)!
    /// What the listener is called in errors ("admin", "API", "gateway").
    private let purpose: String
    let clock: TimeSource
    private var listener: OpaquePointer?
    private(set) var boundPort = 0
    /// The newer process's listener, by its index in the SO_REUSEPORT group, that new connections are
    /// steered to while this one stops.
    private let steerIndex: UInt32
    /// The parser every new connection starts with (its extra header names come from the config).
    @exclusivity(unchecked) var parserTemplate: RequestHeadParser
    private let headTimeoutMs: Int64
    private let idleTimeoutMs: Int64
    private let bodyTimeoutMs: Int64
    /// Answers a connection may have pending before reading from it pauses.
    private let maxPipelined = 32

    @exclusivity(unchecked) private var connections: [UInt64: HTTPConnection] = [:]
    @exclusivity(unchecked) private var nextConnectionID: UInt64 = 1
    /// Answers being encoded, written with one write per batch; kept, so it stops allocating once grown.
    @exclusivity(unchecked) private var output: [UInt8] = []
    @exclusivity(unchecked) private var dateSecond: Int = -1
    @exclusivity(unchecked) private var date: [UInt8] = []

    private let wakeFD: Int32
    private var wakeEvent: OpaquePointer?
    private var sweepEvent: OpaquePointer?
    private var resumeAcceptsEvent: OpaquePointer?

    /// Shared with other threads: work posted to run on this loop, and whether a stop was asked for.
    private struct Mailbox {
        var work: [@Sendable () -> Void] = []
        var stopRequested = false
    }
    private let mailbox = Locked(Mailbox())

    private enum Phase { case running, steering, stopping }
    @exclusivity(unchecked) private var phase = Phase.running
    /// Requests parked by the responder (`respond` returned nil) whose answer has not come back through
    /// `answer` yet: the loop does not exit while there are any.
    @exclusivity(unchecked) private(set) var owed = 0
    var owesAnswers: Bool { owed > 0 }
    /// Strict durability's writer wake (`LinkOutRoute.roundEnded`): told after each round of events, it
    /// says whether the next round should not wait for events. Set before `run`; nil runs the loop whole.
    var afterRound: (() -> Bool)?
    private var exitScheduled = false
    /// The base and its events are freed (by `run` as it returns, or by `deinit`).
    private var baseFreed = false
    /// True once the listener is closed: responders answer new work with 503. (Not while steering: the
    /// connections the kernel queued here before the handover are served as usual.)
    var isStopping: Bool { phase == .stopping }

    /// - Parameters:
    ///   - bodyTimeoutSeconds: how long a body may take to arrive after its head (`ConnectionLife`).
    ///   - clock: the server's one clock: when each request arrived, its duration, the deadlines.
    init(
        purpose: String, headTimeoutSeconds: Int, idleTimeoutSeconds: Int, bodyTimeoutSeconds: Int, steerIndex: UInt32,
        parser: RequestHeadParser, clock: TimeSource
    ) throws {
        self.purpose = purpose
        self.clock = clock
        self.steerIndex = steerIndex
        self.parserTemplate = parser
        headTimeoutMs = Int64(max(0, headTimeoutSeconds)) * 1000
        idleTimeoutMs = Int64(max(1, idleTimeoutSeconds)) * 1000
        bodyTimeoutMs = Int64(max(1, bodyTimeoutSeconds)) * 1000
        // No locks (this base is only ever touched by its own thread) and the epoll changelist, which
        // halves epoll_ctl calls.
        guard let config = event_config_new() else { throw ServerError("event_config_new failed for the \(purpose) listener") }
        defer { event_config_free(config) }
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_NOLOCK.rawValue | EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue))
        guard let base = event_base_new_with_config(config) else { throw ServerError("event_base_new failed for the \(purpose) listener") }
        self.base = base
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else {
            // Every stored property is set: `deinit` runs and frees the base.
            throw ServerError("eventfd failed for the \(purpose) listener: errno \(errno)")
        }
        output.reserveCapacity(16 * 1024)
        let me = Trampoline.argument(self)
        wakeEvent = event_new(
            base, wakeFD, Int16(EV_READ | EV_PERSIST),
            { _, _, argument in
                Trampoline.object(argument, as: HTTPLoop.self)?.wake()
            }, me)
        event_add(wakeEvent, nil)
        resumeAcceptsEvent = event_new(
            base, -1, 0,
            { _, _, argument in
                Trampoline.object(argument, as: HTTPLoop.self)?.resumeAccepts()
            }, me)
        sweepEvent = event_new(
            base, -1, Int16(EV_PERSIST),
            { _, _, argument in
                Trampoline.object(argument, as: HTTPLoop.self)?.sweep()
            }, me)
        var every = timeval(tv_sec: 0, tv_usec: 250_000)
        event_add(sweepEvent, &every)
    }

    deinit {
        // A loop that never ran (a part that failed to start, a responder made by a test) still holds its
        // base and events: `run` frees them otherwise.
        freeBase()
        // The eventfd stays open as long as the loop object: a late `post` from another thread must not
        // write to a descriptor number the process has reused.
        close(wakeFD)
    }

    // MARK: Listening

    /// Listens on `listen`; returns the port bound (the real one for port 0).
    @discardableResult
    func bind(_ listen: ListenAddress, backlog: Int32) throws -> Int {
        guard let (address, length) = SocketAddress.make(listen) else {
            throw ServerError("cannot parse \(purpose) listen address \(listen): the host must be a numeric IPv4 or IPv6 address")
        }
        let listener = SocketAddress.withSockAddr(address) {
            evconnlistener_new_bind(
                base,
                { _, fd, address, length, argument in
                    Trampoline.object(argument, as: HTTPLoop.self)?.accepted(fd, address: address, length: length)
                }, Trampoline.argument(self), clibevent_listener_flags(), backlog, $0, length)
        }
        guard let listener else {
            throw ServerError("cannot listen on \(listen) (\(purpose)): \(String(cString: strerror(errno)))")
        }
        clibevent_unsteer_reuseport(clibevent_listener_fd(listener))
        evconnlistener_set_error_cb(listener) { _, argument in
            let errorNumber = errno
            Trampoline.object(argument, as: HTTPLoop.self)?.acceptFailed(errorNumber: errorNumber)
        }
        self.listener = listener
        boundPort = SocketAddress.localPort(of: clibevent_listener_fd(listener))
        return boundPort
    }

    /// accept() failed. Out of descriptors (EMFILE/ENFILE) or memory, the listener would fire again at once
    /// and spin the loop at 100 % CPU (libevent keeps it enabled), so accepting pauses for 100 ms while the
    /// connections already open are served and free descriptors. Other errors (a client that reset before
    /// accept) are the client's and pass.
    private func acceptFailed(errorNumber: Int32) {
        guard [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(errorNumber), let listener, let resumeAcceptsEvent else { return }
        evconnlistener_disable(listener)
        var pause = timeval(tv_sec: 0, tv_usec: 100_000)
        event_add(resumeAcceptsEvent, &pause)
        responder.acceptPaused(error: String(cString: strerror(errorNumber)))
    }

    private func resumeAccepts() {
        guard phase == .running, let listener else { return }
        evconnlistener_enable(listener)
    }

    private func accepted(_ fd: Int32, address: UnsafeMutablePointer<sockaddr>?, length: Int32) {
        let id = nextConnectionID
        nextConnectionID &+= 1
        let connection = HTTPConnection(
            id: id, fd: fd, address: SocketAddress.copy(address, length: length), parser: parserTemplate,
            life: ConnectionLife(
                openedAt: monotonicMs(), headTimeoutMs: headTimeoutMs, idleTimeoutMs: idleTimeoutMs, bodyTimeoutMs: bodyTimeoutMs))
        let argument = Trampoline.argument(connection)
        // The connection's own pointer is the argument; the loop is found through `owner`.
        connection.readEvent = event_new(
            base, fd, Int16(EV_READ | EV_PERSIST),
            { _, _, argument in
                guard let connection = Trampoline.object(argument, as: HTTPConnection.self) else { return }
                connection.owner?.readable(connection)
            }, argument)
        connection.owner = self
        guard connection.readEvent != nil, event_add(connection.readEvent, nil) == 0 else {
            if let event = connection.readEvent { event_free(event) }
            close(fd)
            return
        }
        connections[id] = connection
    }

    // MARK: Reading

    private func readable(_ connection: HTTPConnection) {
        switch connection.state {
        case .closing, .lingering:
            // Nothing more is read as requests (the last one said close, a head was refused, or the write
            // side is shut): what the client still sends is dropped, not buffered, so it cannot grow memory
            // while the last answer waits for its commit.
            let received = withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { read(connection.fd, $0.baseAddress, 4096) }
            if received == 0 {
                if case .lingering = connection.state { closeConnection(connection) } else { clientClosed(connection) }
            } else if received < 0 && errno != EAGAIN && errno != EINTR {
                closeConnection(connection)
            }
            return
        case .reading, .readingBody, .paused, .closed:
            break
        }
        // Room for a typical head; a longer one grows the buffer, bounded by the parser's head limit.
        connection.reserve(free: 1024)
        let received = read(connection.fd, connection.writePointer, connection.freeSpace)
        if received > 0 {
            connection.count += received
            process(connection)
        } else if received == 0 {
            clientClosed(connection)
        } else if errno != EAGAIN && errno != EINTR {
            closeConnection(connection)
        }
    }

    /// The client shut its side: answer what it asked, then close.
    private func clientClosed(_ connection: HTTPConnection) {
        stopReading(connection)
        // Level-triggered: an EOF would fire the read event forever.
        if let event = connection.readEvent { event_del(event) }
        if connection.slots.isEmpty && connection.pendingOutput.isEmpty {
            closeConnection(connection)
        }
    }

    /// No more requests are read from `connection`: it closes once its pending answers are written. A body
    /// still due stays named, for its deadline; paused reading resumes, so what arrives is dropped.
    private func stopReading(_ connection: HTTPConnection) {
        switch connection.state {
        case .reading:
            connection.state = .closing(unreadBody: nil)
        case .readingBody(let head):
            connection.state = .closing(unreadBody: head)
        case .paused:
            connection.state = .closing(unreadBody: nil)
            event_add(connection.readEvent, nil)
        case .closing, .lingering, .closed:
            break
        }
    }

    /// Parses and dispatches every whole request in the input, in order.
    private func process(_ connection: HTTPConnection) {
        while connection.readsRequests {
            if case .readingBody(let head) = connection.state {
                let needed = head.headLength + head.contentLength
                guard connection.count - connection.start >= needed else {
                    connection.reserve(free: needed - (connection.count - connection.start))
                    connection.life.headBytesArrived(now: monotonicMs())
                    return
                }
                connection.state = .reading
                dispatch(connection, head)
                continue
            }
            guard connection.hasUnconsumedInput else { return }
            switch connection.parser.parse(connection.unconsumed) {
            case .incomplete:
                connection.life.headBytesArrived(now: monotonicMs())
                return
            case .refused(let problem):
                refuse(connection, .head(problem), head: nil)
                return
            case .head(let head):
                if head.contentLength > 0 {
                    let limit = responder.bodyLimit(for: HTTPRequest(bytes: connection.unconsumed, head: head, peer: connection))
                    guard limit > 0, head.contentLength <= limit else {
                        refuse(connection, .body(tooLarge: limit > 0), head: head)
                        return
                    }
                    if connection.count - connection.start < head.headLength + head.contentLength {
                        connection.state = .readingBody(head)
                        connection.life.bodyAwaited(now: monotonicMs())
                        // curl and others wait up to a second for this before sending a body over 1 KiB.
                        // Only between answers: an interim answer must not land inside an earlier one.
                        if head.expectsContinue && connection.slots.isEmpty && connection.pendingOutput.isEmpty {
                            _ = Self.continueLine.withUnsafeBytes { write(connection.fd, $0.baseAddress, $0.count) }
                        }
                        continue
                    }
                }
                dispatch(connection, head)
            }
        }
    }

    /// A whole request: a slot in the connection's answer order, then the responder.
    private func dispatch(_ connection: HTTPConnection, _ head: RequestHead) {
        let sequence = connection.nextSequence
        var facts = ExchangeFacts(method: head.method, arrivedMs: clock.nowMs(), startedMicroseconds: clock.monotonicMicroseconds())
        connection.slots.append(HTTPConnection.Slot(facts: facts, keepAlive: head.keepAlive, http10: head.minorVersion == 0))
        connection.life.requestStarted()
        let request = HTTPRequest(bytes: connection.unconsumed, head: head, peer: connection)
        let reply = responder.respond(to: request, exchange: Exchange(connection: connection.id, sequence: sequence), facts: &facts)
        connection.slots[Int(sequence &- connection.firstSequence)].facts = facts
        connection.consume(head.headLength + head.contentLength)
        connection.parser.reset()
        if !head.keepAlive { stopReading(connection) }
        if let reply = consume reply {
            complete(connection, sequence: sequence, reply)
        } else {
            owed += 1
        }
        if case .reading = connection.state, connection.slots.count >= maxPipelined {
            connection.state = .paused
            event_del(connection.readEvent)
        }
    }

    /// A request refused before any rule: its answer closes the connection, and nothing after it is read.
    private func refuse(_ connection: HTTPConnection, _ refusal: RequestRefusal, head: RequestHead?) {
        let sequence = connection.nextSequence
        var facts = ExchangeFacts(method: head?.method, arrivedMs: clock.nowMs(), startedMicroseconds: clock.monotonicMicroseconds())
        connection.slots.append(HTTPConnection.Slot(facts: facts, keepAlive: false, http10: head?.minorVersion == 0))
        connection.life.requestStarted()
        stopReading(connection)
        var reply = responder.refused(
            refusal, request: head.map { HTTPRequest(bytes: connection.unconsumed, head: $0, peer: connection) }, facts: &facts)
        reply.close = true
        connection.slots[connection.slots.count - 1].facts = facts
        complete(connection, sequence: sequence, reply)
    }

    // MARK: Answering

    /// The answer to a request this loop handed to its responder earlier (`respond` returned nil). On the
    /// loop's thread: other threads `post` a closure that calls it. A closed connection's answer is dropped.
    func answer(_ exchange: Exchange, _ reply: consuming Reply) {
        owed -= 1
        guard let connection = connections[exchange.connection] else { return }
        complete(connection, sequence: exchange.sequence, reply)
    }

    /// `reply` is consumed: moved into its slot, where a copy retained each of its strings once more.
    private func complete(_ connection: HTTPConnection, sequence: UInt32, _ reply: consuming Reply) {
        let index = Int(sequence &- connection.firstSequence)
        guard index >= 0, index < connection.slots.count, !connection.slots[index].isAnswered else { return }
        connection.slots[index].reply = reply
        guard index == 0 else { return }
        flush(connection)
    }

    /// Writes every answer that is ready at the front of the connection's order, in one write.
    private func flush(_ connection: HTTPConnection) {
        output.removeAll(keepingCapacity: true)
        let now = monotonicMs()
        // Each ready slot is moved out of the list, not copied (a copy of a reply retains and releases each
        // of its strings and arrays).
        while !connection.slots.isEmpty, connection.slots[0].isAnswered {
            let first = connection.slots.removeFirst()
            guard let reply = first.reply else { break }
            let last = connection.slots.isEmpty && !connection.hasUnconsumedInput
            // Stopping: the last answer says the connection closes, so the client opens its next one to a
            // newer process.
            let keepAlive = first.keepAlive && !reply.close && !(phase != .running && last)
            ReplyEncoder.encode(
                reply, into: &output, date: currentDate(), headRequest: first.facts.headRequest,
                keepAlive: keepAlive, http10: first.http10)
            connection.firstSequence &+= 1
            connection.life.answered(now: now)
            responder.answered(reply, facts: first.facts, peer: connection.peer)
            if !keepAlive {
                // Nothing after this answer is read or answered.
                stopReading(connection)
                connection.slots.removeAll()
                break
            }
        }
        if !output.isEmpty { send(connection) }
        switch connection.state {
        case .closed:
            return
        case .closing where connection.pendingOutput.isEmpty && connection.slots.isEmpty:
            finish(connection)
            return
        case .paused where connection.slots.count < maxPipelined / 2:
            connection.state = .reading
            event_add(connection.readEvent, nil)
            process(connection)
        default:
            break
        }
        if phase == .stopping { advanceStop() }
    }

    /// `output` to the socket, after anything still waiting there.
    private func send(_ connection: HTTPConnection) {
        if !connection.noDelay, !connection.isLastWrite {
            // Each answer is one write of a whole reply: nothing gains from Nagle's delay, which holds back a
            // small write while an earlier one is unacknowledged. A connection's first write never waits,
            // so a connection written to once (one request per connection: `Connection: close`, a proxy
            // without upstream keep-alive) is spared the system call; any other sets it before its first.
            var one: Int32 = 1
            setsockopt(connection.fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            connection.noDelay = true
        }
        if !connection.pendingOutput.isEmpty {
            connection.pendingOutput.append(contentsOf: output)
            return
        }
        let written = output.withUnsafeBytes { write(connection.fd, $0.baseAddress, $0.count) }
        if written == output.count { return }
        if written < 0 && errno != EAGAIN && errno != EINTR {
            // The client is gone (EPIPE, ECONNRESET): nothing more can reach it.
            closeConnection(connection)
            return
        }
        connection.pendingOutput = Array(output[max(0, written)...])
        connection.life.outputBlocked(now: monotonicMs())
        if connection.writeEvent == nil {
            connection.writeEvent = event_new(
                base, connection.fd, Int16(EV_WRITE | EV_PERSIST),
                { _, _, argument in
                    guard let connection = Trampoline.object(argument, as: HTTPConnection.self) else { return }
                    connection.owner?.writable(connection)
                }, Trampoline.argument(connection))
        }
        event_add(connection.writeEvent, nil)
    }

    private func writable(_ connection: HTTPConnection) {
        let written = connection.pendingOutput.withUnsafeBytes { write(connection.fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno != EAGAIN && errno != EINTR { closeConnection(connection) }
            return
        }
        connection.pendingOutput.removeFirst(written)
        let drained = connection.pendingOutput.isEmpty
        connection.life.outputProgressed(now: monotonicMs(), drained: drained)
        guard drained else { return }
        event_del(connection.writeEvent)
        if case .closing = connection.state, connection.slots.isEmpty { finish(connection) }
        if phase == .stopping { advanceStop() }
    }

    /// Every answer is out and the connection is to close. With nothing more from the client it closes at
    /// once; if the client may still be sending (a refused head, a body not read), the write side is shut
    /// and input dropped for up to two seconds first, since closing a socket with unread input sends a
    /// reset that can destroy the answer before the client reads it.
    private func finish(_ connection: HTTPConnection) {
        var probe: UInt8 = 0
        let more = connection.hasUnconsumedInput ? 1 : recv(connection.fd, &probe, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        if more <= 0 || connection.readEvent == nil {
            closeConnection(connection)
            return
        }
        shutdown(connection.fd, Int32(SHUT_WR))
        connection.state = .lingering(until: monotonicMs() + 2000)
        event_add(connection.readEvent, nil)
    }

    private func closeConnection(_ connection: HTTPConnection) {
        guard !connection.isClosed else { return }
        connection.state = .closed
        if let event = connection.readEvent { event_free(event) }
        if let event = connection.writeEvent { event_free(event) }
        connection.readEvent = nil
        connection.writeEvent = nil
        close(connection.fd)
        connections[connection.id] = nil
        if phase == .stopping { advanceStop() }
    }

    /// The `Date` header, on the loop's clock.
    private func currentDate() -> [UInt8] {
        let second = Int(clock.nowMs() / 1000)
        if second != dateSecond {
            dateSecond = second
            date = HTTPDate.format(secondsSinceEpoch: Int64(second))
        }
        return date
    }

    private static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private func monotonicMs() -> Int64 { clock.monotonicMilliseconds() }

    // MARK: Deadlines

    private func sweep() {
        let now = monotonicMs()
        for connection in connections.values {
            if case .lingering(let until) = connection.state {
                if now > until { closeConnection(connection) }
            } else if let expiry = connection.life.expiry(now: now) {
                // A body that did not arrive in time: the responder learns whose (its head is whole).
                if expiry == .slowBody, let head = connection.headAwaitingBody {
                    responder.expired(expiry, request: HTTPRequest(bytes: connection.unconsumed, head: head, peer: connection))
                } else {
                    responder.expired(expiry, request: nil)
                }
                closeConnection(connection)
            }
        }
    }

    // MARK: Mailbox and stopping

    /// From any thread: `work` runs on the loop's thread at its next wake-up.
    func post(_ work: @escaping @Sendable () -> Void) {
        mailbox.withLock { $0.work.append(work) }
        signalWake()
    }

    /// From any thread: answers made elsewhere for requests this loop parked, written at its next wake-up.
    func deliver(_ replies: [ParkedReply]) {
        post { [self] in
            for parked in replies { answer(parked.exchange, parked.reply) }
        }
    }

    /// From any thread: stop accepting, answer what is pending, then leave `run`.
    func requestStop() {
        mailbox.withLock { $0.stopRequested = true }
        signalWake()
    }

    private func signalWake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func wake() {
        var counter: UInt64 = 0
        _ = read(wakeFD, &counter, 8)
        let (work, stop) = mailbox.withLock { box in
            let work = box.work
            box.work = []
            return (work, box.stopRequested)
        }
        for job in work { job() }
        if stop && phase == .running {
            phase = .steering
            // A newer process on the same port (a restart with no gap) gets every new connection from now
            // on; this loop keeps accepting a moment longer, so the connections the kernel had already
            // queued here are served rather than reset when the listener closes. Without a newer process the
            // steering points past the group and the kernel hashes as before.
            if let listener { _ = clibevent_steer_reuseport(clibevent_listener_fd(listener), steerIndex) }
            var pause = timeval(tv_sec: 0, tv_usec: 50_000)
            event_base_once(
                base, -1, Int16(EV_TIMEOUT),
                { _, _, argument in
                    Trampoline.object(argument, as: HTTPLoop.self)?.closeListener()
                }, Trampoline.argument(self), &pause)
        }
        if phase == .stopping { advanceStop() }
    }

    private func closeListener() {
        phase = .stopping
        // Closing the listener (not just pausing it) makes the kernel stop routing new connections to this
        // thread's SO_REUSEPORT queue.
        if let listener { evconnlistener_free(listener) }
        listener = nil
        if let resumeAcceptsEvent { event_del(resumeAcceptsEvent) }
        // Idle connections have nothing coming: closed now, so clients reconnect to a newer process.
        for connection in connections.values
        where connection.slots.isEmpty && connection.pendingOutput.isEmpty && !connection.hasUnconsumedInput {
            closeConnection(connection)
        }
        advanceStop()
    }

    /// Exits once nothing is owed: every answer written, every deferred answer made.
    private func advanceStop() {
        guard phase == .stopping, !exitScheduled, owed == 0 else { return }
        for connection in connections.values where !connection.slots.isEmpty || !connection.pendingOutput.isEmpty {
            return
        }
        exitScheduled = true
        // A short pause lets the kernel send the last answers before the sockets close.
        var pause = timeval(tv_sec: 0, tv_usec: 100_000)
        event_base_loopexit(base, &pause)
    }

    /// The loop thread's body: runs until stopped, then closes every connection and frees the base.
    func run() {
        if let afterRound {
            // One round of events at a time (what `event_base_dispatch` loops over), so `afterRound` hears
            // when each ends. `event_base_loopexit` ends the round it fires in and is seen here before the
            // next call clears it.
            var holding = false
            while event_base_got_exit(base) == 0 {
                let flags = holding ? EVLOOP_ONCE | EVLOOP_NONBLOCK : EVLOOP_ONCE
                guard event_base_loop(base, Int32(flags)) == 0 else { break }
                holding = afterRound()
            }
        } else {
            event_base_dispatch(base)
        }
        for connection in Array(connections.values) { closeConnection(connection) }
        freeBase()
    }

    private func freeBase() {
        guard !baseFreed else { return }
        baseFreed = true
        if let listener { evconnlistener_free(listener) }
        listener = nil
        for event in [wakeEvent, sweepEvent, resumeAcceptsEvent] { if let event { event_free(event) } }
        wakeEvent = nil
        sweepEvent = nil
        resumeAcceptsEvent = nil
        event_base_free(base)
    }
}
