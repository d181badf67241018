import CLibevent
import CLibeventStructs
import CoreMetrics
import Foundation
import Glibc
import LinkOutCore
import LinkOutStore
import Logging

/// One thread's event_base, evhttp and listener. Everything here runs on that thread, except `post` and
/// `requestStop`, which other threads use to hand it work through the mailbox and its eventfd.
final class EventLoop: @unchecked Sendable {
    let index: Int
    unowned let server: LinkOutServer
    private let base: OpaquePointer
    private let http: OpaquePointer
    private var boundSocket: OpaquePointer?
    private var listener: OpaquePointer?
    private var resumeAcceptsEvent: OpaquePointer?
    /// Every connection's raw head scan, and the slowloris guard (no deadlines when
    /// `requestHeadTimeoutSeconds` is 0).
    private let headDeadlines: HeadDeadlines
    private var sweepEvent: OpaquePointer?
    private(set) var boundPort: Int = 0
    private let wakeFD: Int32
    private var wakeEvent: OpaquePointer?

    // Shared with other threads, guarded by `mailboxLock`.
    private let mailboxLock = NSLock()
    private var mailbox: [(tickets: [ReplyTicket], committed: Bool)] = []
    private var stopRequested = false
    private var newServing: ServingState?
    private var notificationReplies: [NotificationIntake.Reply] = []

    // This loop's thread only.
    /// The rules and pages this loop answers with; replaced whole by a reload, between two requests.
    private var serving: ServingState
    /// This loop's share of the per-client rate limit (a client's connections spread over the loops).
    private var limiter: RateLimiter?
    private let loopCount: Int

    private static func limiter(for policy: RateLimiter.Policy?, loops: Int) -> RateLimiter? {
        guard let policy else { return nil }
        let share = Double(max(1, loops))
        return RateLimiter(policy: RateLimiter.Policy(
            ratePerSecond: policy.ratePerSecond / share, burst: max(1, policy.burst / share)))
    }
    private var inFlight = 0
    /// `notifications.path` when Apple's notifications are on: the one path whose body is read.
    private let notificationPath: [UInt8]?
    /// Notifications handed to the intake, by request, with what their access line needs.
    private var parkedNotifications: [UInt: PendingAccess] = [:]
    private var stopping = false
    /// Between the stop request and `stopping`: new connections are steered to a newer process sharing the
    /// port, while this loop still accepts and serves what the kernel queued for it before.
    private var handover: Handover = .none
    private enum Handover { case none, steering, done }
    private var exitScheduled = false

    init(index: Int, loopCount: Int, server: LinkOutServer, listen: ListenAddress) throws {
        self.index = index
        self.loopCount = loopCount
        self.server = server
        self.serving = server.serving
        self.limiter = Self.limiter(for: server.serving.gateway.config.rateLimit, loops: loopCount)
        self.headDeadlines = HeadDeadlines(timeoutSeconds: server.settings.requestHeadTimeoutSeconds)

        // No locks (this base is only ever touched by its own thread) and the epoll changelist, which
        // halves epoll_ctl calls.
        guard let config = event_config_new() else { throw ServerError("event_config_new failed") }
        defer { event_config_free(config) }
        event_config_set_flag(config, Int32(EVENT_BASE_FLAG_NOLOCK.rawValue | EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue))
        guard let base = event_base_new_with_config(config) else { throw ServerError("event_base_new failed") }
        self.base = base
        guard let http = evhttp_new(base) else { throw ServerError("evhttp_new failed") }
        self.http = http

        let settings = server.settings
        // An empty 302 must not get evhttp's default "text/html; charset=ISO-8859-1".
        evhttp_set_default_content_type(http, nil)
        evhttp_set_allowed_methods(http, clibevent_all_methods())
        evhttp_set_timeout(http, Int32(settings.idleTimeoutSeconds))
        evhttp_set_max_headers_size(http, 16 * 1024)
        // A link-out request has no body; evhttp answers any body with 413 before calling us. With Apple's
        // notifications on, evhttp reads bodies up to their limit (the limit is per evhttp, not per path)
        // and `handle` answers 413 itself for a body on any other path, as evhttp would.
        let notifications = server.notifications?.settings
        notificationPath = notifications.map { Array($0.path.utf8) }
        evhttp_set_max_body_size(http, notifications.map { Int($0.maxBodyBytes) } ?? 0)

        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeFD >= 0 else { throw ServerError("eventfd failed: errno \(errno)") }

        let me = Unmanaged.passUnretained(self).toOpaque()
        evhttp_set_gencb(http, { request, argument in
            guard let request, let argument else { return }
            Unmanaged<EventLoop>.fromOpaque(argument).takeUnretainedValue().handle(request)
        }, me)
        wakeEvent = event_new(base, wakeFD, Int16(EV_READ | EV_PERSIST), { _, _, argument in
            guard let argument else { return }
            Unmanaged<EventLoop>.fromOpaque(argument).takeUnretainedValue().wake()
        }, me)
        guard let wakeEvent, event_add(wakeEvent, nil) == 0 else { throw ServerError("cannot watch the wake-up eventfd") }
        resumeAcceptsEvent = event_new(base, -1, 0, { _, _, argument in
            guard let argument else { return }
            Unmanaged<EventLoop>.fromOpaque(argument).takeUnretainedValue().resumeAccepts()
        }, me)
        // Always: the raw head scan needs every connection's bufferevent, and the sweep releases them.
        evhttp_set_bevcb(http, { base, argument in
            guard let base, let argument else { return nil }
            return Unmanaged<EventLoop>.fromOpaque(argument).takeUnretainedValue().headDeadlines.newConnection(base: base)
        }, me)
        sweepEvent = event_new(base, -1, Int16(EV_PERSIST), { _, _, argument in
            guard let argument else { return }
            Unmanaged<EventLoop>.fromOpaque(argument).takeUnretainedValue().sweepSlowClients()
        }, me)
        var every = timeval(tv_sec: 0, tv_usec: 500_000)
        event_add(sweepEvent, &every)

        try bind(listen)
        Self.registry.withLock { $0[UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(base)))] = Unmanaged.passUnretained(self) }
    }

    // MARK: Accept errors

    /// The loops by their event_base, for the listener's error callback, which is handed only the listener.
    private static let registry = Registry()

    /// Behind an NSLock (pthread) rather than Synchronization's `Mutex`: ThreadSanitizer cannot see `Mutex`'s
    /// futex on Linux and reported the loops' concurrent removals at shutdown as a race (`make test-tsan`).
    private final class Registry: @unchecked Sendable {
        private let lock = NSLock()
        private var loops: [UInt: Unmanaged<EventLoop>] = [:]

        func withLock<Result>(_ body: (inout [UInt: Unmanaged<EventLoop>]) -> Result) -> Result {
            lock.lock()
            defer { lock.unlock() }
            return body(&loops)
        }
    }

    /// accept() failed. Out of descriptors (EMFILE/ENFILE) or memory, the listener would fire again at once
    /// and spin the loop at 100 % CPU (libevent 2.1 keeps it enabled), so accepting pauses for 100 ms while
    /// the connections already open are served and free descriptors. Other errors (a client that reset
    /// before accept) are the client's and pass.
    private func acceptFailed(errorNumber: Int32) {
        guard [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(errorNumber), let listener, let resumeAcceptsEvent else { return }
        evconnlistener_disable(listener)
        var pause = timeval(tv_sec: 0, tv_usec: 100_000)
        event_add(resumeAcceptsEvent, &pause)
        server.logger.warning("accept failed; pausing accepts for 100 ms", metadata: [
            "error": "\(String(cString: strerror(errorNumber)))", "loop": "\(index)",
        ])
    }

    private func resumeAccepts() {
        guard !stopping, let listener else { return }
        evconnlistener_enable(listener)
    }

    private func bind(_ listen: ListenAddress) throws {
        guard let (address, length) = Self.socketAddress(listen) else {
            throw ServerError("cannot parse listen address \(listen): the host must be a numeric IPv4 or IPv6 address")
        }
        var storage = address
        let listener = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                evconnlistener_new_bind(base, nil, nil, clibevent_listener_flags(), 1024, $0, length)
            }
        }
        guard let listener else {
            throw ServerError("cannot listen on \(listen): \(String(cString: strerror(errno)))")
        }
        boundSocket = evhttp_bind_listener(http, listener)
        clibevent_unsteer_reuseport(clibevent_listener_fd(listener))
        self.listener = listener
        evconnlistener_set_error_cb(listener) { listener, _ in
            let errorNumber = errno
            guard let listener, let base = evconnlistener_get_base(listener) else { return }
            let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(base)))
            EventLoop.registry.withLock { $0[key] }?.takeUnretainedValue().acceptFailed(errorNumber: errorNumber)
        }
        boundPort = Self.localPort(of: listener)
    }

    /// A numeric IPv4 or IPv6 address and port. (`evutil_parse_sockaddr_port` refuses port 0, which tests
    /// and scripts need to let the kernel pick a free port.)
    static func socketAddress(_ listen: ListenAddress) -> (sockaddr_storage, Int32)? {
        var storage = sockaddr_storage()
        let port = UInt16(listen.port).bigEndian
        let host = listen.host == "localhost" ? "127.0.0.1" : listen.host
        var ipv4 = sockaddr_in()
        if inet_pton(AF_INET, host, &ipv4.sin_addr) == 1 {
            ipv4.sin_family = sa_family_t(AF_INET)
            ipv4.sin_port = port
            // Copy inside both closures: a pointer must not outlive the closure that lent it (the optimiser
            // reuses that memory, which once turned the address family into garbage in release builds).
            withUnsafeBytes(of: ipv4) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
            return (storage, Int32(MemoryLayout<sockaddr_in>.size))
        }
        var ipv6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &ipv6.sin6_addr) == 1 {
            ipv6.sin6_family = sa_family_t(AF_INET6)
            ipv6.sin6_port = port
            withUnsafeBytes(of: ipv6) { source in withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) } }
            return (storage, Int32(MemoryLayout<sockaddr_in6>.size))
        }
        return nil
    }

    /// The port a listener is bound to: the real one when port 0 was asked for.
    static func localPort(of listener: OpaquePointer) -> Int {
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &bound) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = getsockname(clibevent_listener_fd(listener), $0, &length)
            }
        }
        return Int(UInt16(bigEndian: bound.ss_family == sa_family_t(AF_INET6)
            ? withUnsafePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port } }
            : withUnsafePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port } }))
    }

    /// The loop thread's body.
    func run() {
        event_base_dispatch(base)
        Self.registry.withLock { _ = $0.removeValue(forKey: UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(base)))) }
        evhttp_free(http)
        headDeadlines.releaseAll()
        if let sweepEvent { event_free(sweepEvent) }
        if let wakeEvent { event_free(wakeEvent) }
        if let resumeAcceptsEvent { event_free(resumeAcceptsEvent) }
        close(wakeFD)
        event_base_free(base)
    }

    // MARK: Requests

    private func sweepSlowClients() {
        let before = headDeadlines.closedSlowClients
        headDeadlines.sweep()
        let closed = headDeadlines.closedSlowClients - before
        if closed > 0 { server.metrics.slowClientsClosed.increment(by: Int64(closed)) }
    }

    private func handle(_ request: OpaquePointer) {
        let rawProblem = headDeadlines.requestStarted(request)
        let arrivedMs = clibevent_now_ms()
        let startedMicroseconds = server.accessLog == nil ? 0 : clibevent_monotonic_us()
        // The client's address, worked out once and only when needed (rate limit, access log).
        var resolvedClient: String?
        func client() -> String {
            if let resolvedClient { return resolvedClient }
            let address = clientAddress(request)
            resolvedClient = address
            return address
        }
        /// Writes the access log line for an answer sent now.
        func logged(
            _ status: Int, route: String, reason: String? = nil, id: String? = nil, destination: String? = nil, kind: String? = nil
        ) {
            guard let accessLog = server.accessLog else { return }
            accessLog.record(AccessRecord(
                time: arrivedMs, method: methodName(request), route: route, status: status, reason: reason,
                externalPurchaseId: id, destination: destination, kind: kind, client: client(),
                durationMicroseconds: clibevent_monotonic_us() - startedMicroseconds))
        }
        let method: RequestMethod
        switch evhttp_request_get_command(request) {
        case EVHTTP_REQ_GET: method = .get
        case EVHTTP_REQ_HEAD: method = .head
        default: method = .other
        }
        guard let uri = evhttp_request_get_uri(request) else {
            sendPage(request, .damagedToken, language: language(request, country: nil))
            return
        }
        let target = UnsafeRawBufferPointer(start: uri, count: strlen(uri))
        // With notifications on, evhttp reads bodies (its limit is per evhttp): a body anywhere but on the
        // notification path gets what evhttp answers when its limit is 0, before anything else is looked at.
        // HEAD and TRACE bodies evhttp never reads; the head rules refuse those (body_not_allowed) as before.
        var isNotification = false
        if let notificationPath {
            isNotification = UnsafeRawBufferPointer(rebasing: target.prefix { $0 != UInt8(ascii: "?") }).elementsEqual(notificationPath)
            if !isNotification && evbuffer_get_length(evhttp_request_get_input_buffer(request)) > 0 {
                let bev = headDeadlines.hasDeadlines ? HeadDeadlines.bufferevent(of: request) : nil
                evhttp_send_error(request, 413, nil)
                headDeadlines.answered(bev)
                logged(413, route: "body_refused")
                return
            }
        }
        let bodyAllowed = isNotification && evhttp_request_get_command(request) == EVHTTP_REQ_POST
        if let problem = rawProblem ?? headProblem(request, target: target, bodyAllowed: bodyAllowed) {
            server.metrics.malformed.increment()
            addHeader(request, "X-Linkout-Reason", problem.rawValue)
            addHeader(request, "Connection", "close")
            sendPage(request, .damagedToken, language: language(request, country: nil))
            logged(400, route: "malformed", reason: problem.rawValue)
            return
        }
        if isNotification {
            takeNotification(request, arrivedMs: arrivedMs, startedMicroseconds: startedMicroseconds, client: client) {
                logged($0, route: $1, reason: $2)
            }
            return
        }
        // Link-out requests, valid or not, count against the client's rate; health checks do not. Checked
        // before deciding, so a client over its rate costs a path look-up, not a token's decoding.
        if limiter != nil, method != .other, let linkIndex = serving.gateway.linkIndex(target: target),
           !limiter!.allow(client: client().utf8, nowMs: arrivedMs) {
            serving.linkMetrics[linkIndex].rateLimited.increment()
            addHeader(request, "Retry-After", "1")
            addHeader(request, "X-Linkout-Reason", "rate_limited")
            sendPage(request, .tooManyRequests, language: language(request, country: serving.gateway.config.links[linkIndex].country))
            logged(429, route: serving.gateway.config.links[linkIndex].id, reason: "rate_limited")
            return
        }
        let context = EvhttpRequestContext(request: request, loop: self, client: client)
        let decision = serving.gateway.decide(method: method, target: target, nowMs: arrivedMs, context: context)

        switch decision {
        case .health:
            server.metrics.healthChecks.increment()
            sendText(request, 200, "OK", "ok\n")
            logged(200, route: "healthz")
        case .readiness:
            server.metrics.healthChecks.increment()
            let readiness = server.readiness()
            if readiness.degraded { addHeader(request, "X-Linkout-Degraded", "spool") }
            sendText(request, readiness.status, readiness.phrase, readiness.why + "\n")
            logged(Int(readiness.status), route: "readyz")
        case .notFound:
            server.metrics.notFound.increment()
            sendPage(request, .notFound, language: language(request, country: nil))
            logged(404, route: "not_found")
        case .favicon:
            // Browsers ask with every page: an empty answer they keep for a day, not the 404 page each time.
            addHeader(request, "Cache-Control", "public, max-age=86400")
            send(request, 204, "No Content", [])
            logged(204, route: "favicon")
        case .robots:
            addHeader(request, "Content-Type", "text/plain; charset=utf-8")
            addHeader(request, "Cache-Control", "public, max-age=86400")
            send(request, 200, "OK", Self.robots)
            logged(200, route: "robots")
        case .methodNotAllowed:
            server.metrics.methodNotAllowed.increment()
            addHeader(request, "Allow", "GET, HEAD")
            sendPage(request, .methodNotAllowed, language: language(request, country: nil))
            logged(405, route: "method_not_allowed")
        case .reject(let refusal):
            let counters = serving.linkMetrics[refusal.linkIndex]
            counters.rejected.increment()
            counters.rejections[refusal.rejection.reason]?.increment()
            // The dashboard's refusals by reason: counted in the store with the next batch, so they last.
            server.writer.noteRefusal(link: refusal.link, reason: refusal.rejection.reason.rawValue, at: arrivedMs)
            addHeader(request, "X-Linkout-Reason", refusal.rejection.reason.rawValue)
            if let field = refusal.rejection.field { addHeader(request, "X-Linkout-Reason-Field", field.rawValue) }
            sendPage(request, PageKind.refusal(refusal.rejection.reason),
                     language: language(request, country: serving.gateway.config.links[refusal.linkIndex].country))
            let reason = refusal.rejection.field.map { "\(refusal.rejection.reason.rawValue):\($0.rawValue)" } ?? refusal.rejection.reason.rawValue
            logged(400, route: refusal.link, reason: reason)
        case .redirect(let redirect):
            // An unrouted token answered 404 belongs to no link: no link counters.
            let counters = redirect.linkIndex >= 0 ? serving.linkMetrics[redirect.linkIndex] : nil
            let route = redirect.unroutedPath == nil ? redirect.link : Gateway.unroutedLink
            // Unrouted paths are not link paths, so the limiter did not see them above.
            if redirect.unroutedPath != nil, limiter != nil, !limiter!.allow(client: client().utf8, nowMs: arrivedMs) {
                counters?.rateLimited.increment()
                addHeader(request, "Retry-After", "1")
                addHeader(request, "X-Linkout-Reason", "rate_limited")
                sendPage(request, .tooManyRequests, language: language(request, country: nil))
                logged(429, route: route, reason: "rate_limited")
                return
            }
            if let refusal = redirect.refusal {
                counters?.rejections[refusal.reason]?.increment()
                // Refused, though sent on (onInvalidToken: redirect): a refusal on the dashboard too, as in
                // the metrics; its visit also counts as kind `untokened`.
                server.writer.noteRefusal(link: route, reason: refusal.reason.rawValue, at: arrivedMs)
            }
            let id: String?
            let destination: String
            let record = redirect.record
            switch record {
            case .token(let visit): (id, destination) = (visit.externalPurchaseId, visit.destination)
            case .untokened(let visit): (id, destination) = (nil, visit.destination)
            }
            let relaxed = server.settings.durability != .strict
            let kind = redirect.kind == .shopper ? nil : redirect.kind.rawValue
            // Only a reply sent later needs its access line's parts kept; a relaxed reply is logged now.
            let access = server.accessLog == nil || relaxed ? nil : PendingAccess(
                arrivedMs: arrivedMs, startedMicroseconds: startedMicroseconds, method: methodName(request),
                route: route, externalPurchaseId: id, destination: destination, kind: kind,
                client: client())
            var ticket = relaxed ? ReplyTicket.answered(loop: index) : ReplyTicket(
                loop: index, request: UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(request))),
                location: redirect.location, reason: redirect.refusal?.reason.rawValue, access: access)
            ticket.notFound = redirect.notFound
            // The page language only matters if a page is sent (404 or 503): worked out for those alone.
            if !relaxed || redirect.notFound {
                let country = redirect.linkIndex >= 0 && !redirect.notFound ? serving.gateway.config.links[redirect.linkIndex].country : nil
                ticket.language = language(request, country: country)
            }
            // While stopping, or when the writer is full, nothing new is promised: 503, nothing recorded.
            guard !stopping, server.writer.submit(record, ticket: ticket) else {
                counters?.unavailable.increment()
                addHeader(request, "Retry-After", "1")
                sendPage(request, .unavailable, language: language(request, country: redirect.linkIndex >= 0 ? serving.gateway.config.links[redirect.linkIndex].country : nil))
                logged(503, route: route, reason: "store_unavailable", id: id)
                return
            }
            // Counted when handed over: a failed commit later shows as linkout_commit_failures_total.
            if let path = redirect.unroutedPath {
                server.metrics.unroutedTokens.increment()
                server.unroutedLog.note(path: path, link: redirect.notFound ? nil : redirect.link, nowMs: arrivedMs)
            }
            if let unusual = redirect.unusualToken { server.metrics.unusualTokens[unusual]?.increment() }
            if redirect.notFound {
                server.metrics.notFound.increment()
            } else if let counters {
                if redirect.refusal == nil {
                    counters.redirected.increment()
                    counters.destinations[redirect.destinationIndex].increment()
                } else {
                    counters.redirectedWithoutToken.increment()
                }
                counters.visits[redirect.kind]?.increment()
                if redirect.allDown { counters.allDown.increment() }
            }
            if relaxed {
                if redirect.notFound {
                    sendPage(request, .notFound, language: ticket.language)
                    logged(404, route: route, id: id, kind: kind)
                } else {
                    sendRedirect(request, location: redirect.location, reason: redirect.refusal?.reason.rawValue)
                    logged(302, route: route, reason: redirect.refusal?.reason.rawValue, id: id, destination: destination, kind: kind)
                }
            } else {
                inFlight += 1
            }
        }
    }

    // MARK: Apple's notifications

    /// `POST` on the notification path: the body goes to the intake thread and the request waits, parked,
    /// for its answer through the mailbox (`post(_ reply:)`). Anything else there is 405.
    private func takeNotification(
        _ request: OpaquePointer, arrivedMs: Int64, startedMicroseconds: Int64, client: () -> String,
        logged: (Int, String, String?) -> Void
    ) {
        guard evhttp_request_get_command(request) == EVHTTP_REQ_POST else {
            server.metrics.methodNotAllowed.increment()
            addHeader(request, "Allow", "POST")
            sendJSON(request, 405, "Method Not Allowed", #"{"error":"use POST"}"#)
            logged(405, "notifications", "method_not_allowed")
            return
        }
        let input = evhttp_request_get_input_buffer(request)
        let length = evbuffer_get_length(input)
        var body = [UInt8](repeating: 0, count: length)
        if length > 0 { _ = body.withUnsafeMutableBytes { evbuffer_copyout(input, $0.baseAddress, length) } }
        let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(request)))
        guard !stopping, let intake = server.notifications,
              intake.submit(NotificationIntake.Job(loop: index, request: key, body: body, client: client())) else {
            addHeader(request, "Retry-After", "1")
            sendJSON(request, 503, "Service Unavailable", #"{"error":"busy"}"#)
            logged(503, "notifications", "busy")
            return
        }
        parkedNotifications[key] = PendingAccess(
            arrivedMs: arrivedMs, startedMicroseconds: startedMicroseconds, method: "POST", route: "notifications",
            externalPurchaseId: nil, destination: "", kind: nil, client: client())
        inFlight += 1
    }

    /// Called from the intake thread with the answer for a notification this loop parked.
    func post(_ reply: NotificationIntake.Reply) {
        mailboxLock.lock()
        notificationReplies.append(reply)
        mailboxLock.unlock()
        signalWake()
    }

    private func answerNotification(_ reply: NotificationIntake.Reply) {
        guard let request = OpaquePointer(bitPattern: reply.request) else { return }
        sendJSON(request, reply.status, reply.status == 200 ? "OK" : reply.status == 400 ? "Bad Request" : "Service Unavailable", reply.json)
        if let access = parkedNotifications.removeValue(forKey: reply.request), let accessLog = server.accessLog {
            accessLog.record(AccessRecord(
                time: access.arrivedMs, method: access.method, route: access.route, status: Int(reply.status), reason: reply.reason,
                externalPurchaseId: nil, destination: nil, kind: nil, client: access.client,
                durationMicroseconds: clibevent_monotonic_us() - access.startedMicroseconds))
        }
        inFlight -= 1
    }

    /// The client's country from the GeoIP database, if the server has one.
    fileprivate func geoCountry(client: String) -> String? {
        serving.geoIP?.country(forAddress: client)
    }

    // MARK: Mailbox

    /// Called from the writer thread with tickets of this loop whose batch finished.
    func post(_ tickets: [ReplyTicket], committed: Bool) {
        mailboxLock.lock()
        mailbox.append((tickets, committed))
        mailboxLock.unlock()
        signalWake()
    }

    /// Called from the main thread on a reload: the loop switches to `state` at its next wake-up, so a
    /// request is answered wholly by the old rules or wholly by the new.
    func install(_ state: ServingState) {
        mailboxLock.lock()
        newServing = state
        mailboxLock.unlock()
        signalWake()
    }

    /// Called from the main thread when the gateway stops.
    func requestStop() {
        mailboxLock.lock()
        stopRequested = true
        mailboxLock.unlock()
        signalWake()
    }

    private func signalWake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func wake() {
        var counter: UInt64 = 0
        _ = read(wakeFD, &counter, 8)
        mailboxLock.lock()
        let batches = mailbox
        mailbox = []
        let replies = notificationReplies
        notificationReplies = []
        let stop = stopRequested
        let installed = newServing
        newServing = nil
        mailboxLock.unlock()

        if let installed {
            if installed.gateway.config.rateLimit != serving.gateway.config.rateLimit {
                limiter = Self.limiter(for: installed.gateway.config.rateLimit, loops: loopCount)
            }
            serving = installed
        }

        for batch in batches {
            for ticket in batch.tickets {
                guard let request = OpaquePointer(bitPattern: ticket.request) else { continue }
                if batch.committed && ticket.notFound {
                    sendPage(request, .notFound, language: ticket.language)
                } else if batch.committed {
                    sendRedirect(request, location: ticket.location, reason: ticket.reason)
                } else {
                    addHeader(request, "Retry-After", "1")
                    sendPage(request, .unavailable, language: ticket.language)
                }
                if let access = ticket.access, let accessLog = server.accessLog {
                    accessLog.record(AccessRecord(
                        time: access.arrivedMs, method: access.method, route: access.route,
                        status: batch.committed ? (ticket.notFound ? 404 : 302) : 503, reason: batch.committed ? ticket.reason : "store_failed",
                        externalPurchaseId: access.externalPurchaseId, destination: batch.committed && !ticket.notFound ? access.destination : nil,
                        kind: access.kind, client: access.client, durationMicroseconds: clibevent_monotonic_us() - access.startedMicroseconds))
                }
                inFlight -= 1
            }
        }
        for reply in replies { answerNotification(reply) }
        if stop && handover == .none {
            handover = .steering
            // A newer process on the same port (a restart with no gap) gets every new connection from now
            // on; this loop keeps accepting a moment longer, so the connections the kernel had already
            // queued here are served rather than reset when the listener closes. Without a newer process the
            // steering points past the group and the kernel hashes as before.
            if let listener { _ = clibevent_steer_reuseport(clibevent_listener_fd(listener), UInt32(loopCount)) }
            var pause = timeval(tv_sec: 0, tv_usec: 50_000)
            event_base_once(base, -1, Int16(EV_TIMEOUT), { _, _, argument in
                guard let argument else { return }
                let loop = Unmanaged<EventLoop>.fromOpaque(argument).takeUnretainedValue()
                loop.handover = .done
                loop.advanceStop()
            }, Unmanaged.passUnretained(self).toOpaque(), &pause)
        }
        advanceStop()
    }

    /// Closes the listener once the handover pause is over, and exits once nothing is in flight.
    private func advanceStop() {
        if handover == .done && !stopping {
            stopping = true
            // Closing the listener (not just pausing it) makes the kernel stop routing new connections
            // to this thread's SO_REUSEPORT queue.
            if let boundSocket { evhttp_del_accept_socket(http, boundSocket) }
            boundSocket = nil
            listener = nil
            if let resumeAcceptsEvent { event_del(resumeAcceptsEvent) }
        }
        if stopping && inFlight == 0 && !exitScheduled {
            exitScheduled = true
            // A short pause lets the last replies leave their output buffers before evhttp_free.
            var pause = timeval(tv_sec: 0, tv_usec: 100_000)
            event_base_loopexit(base, &pause)
        }
    }

    /// The head's problems that libevent lets through (`RequestHeadRules`), first one wins. (What its
    /// parser hides, the raw scan in `HeadDeadlines` has found before this.)
    private func headProblem(_ request: OpaquePointer, target: UnsafeRawBufferPointer, bodyAllowed: Bool) -> HeadProblem? {
        if let problem = RequestHeadRules.check(target: target) { return problem }
        var rules = RequestHeadRules(bodyAllowed: bodyAllowed)
        var header = clibevent_headers_first(evhttp_request_get_input_headers(request))
        while let current = header {
            if let key = current.pointee.key, let value = current.pointee.value {
                let name = UnsafeRawBufferPointer(start: key, count: strlen(key))
                let text = UnsafeRawBufferPointer(start: value, count: strlen(value))
                if let problem = rules.check(name: name, value: text) { return problem }
            }
            header = clibevent_headers_next(current)
        }
        var major: Int32 = 0
        var minor: Int32 = 0
        clibevent_request_version(request, &major, &minor)
        return rules.checkEnd(major: Int(major), minor: Int(minor))
    }

    // MARK: Responses

    private func methodName(_ request: OpaquePointer) -> String {
        switch evhttp_request_get_command(request) {
        case EVHTTP_REQ_GET: "GET"
        case EVHTTP_REQ_HEAD: "HEAD"
        case EVHTTP_REQ_POST: "POST"
        case EVHTTP_REQ_PUT: "PUT"
        case EVHTTP_REQ_DELETE: "DELETE"
        case EVHTTP_REQ_OPTIONS: "OPTIONS"
        case EVHTTP_REQ_TRACE: "TRACE"
        case EVHTTP_REQ_CONNECT: "CONNECT"
        case EVHTTP_REQ_PATCH: "PATCH"
        default: "OTHER"
        }
    }

    /// The client: the peer, or, when the peer is a trusted proxy, the address its forwarding header names.
    private func clientAddress(_ request: OpaquePointer) -> String {
        let direct = Self.peer(request)
        let proxies = serving.gateway.config.proxies
        guard !proxies.trusted.isEmpty else { return direct }
        let headers = evhttp_request_get_input_headers(request)
        guard let raw = evhttp_find_header(headers, proxies.header.rawValue) else { return direct }
        var list = String(cString: raw)
        if proxies.header == .forwarded { list = TrustedProxies.forwardedFor(fromForwarded: list) }
        return proxies.trusted.client(peer: direct, forwardedFor: list) ?? direct
    }

    /// The peer's address as evhttp holds it (no look-up, no allocation for an IPv4 address).
    static func peer(_ request: OpaquePointer) -> String {
        guard let connection = evhttp_request_get_connection(request) else { return "-" }
        var address: UnsafeMutablePointer<CChar>?
        var port: UInt16 = 0
        evhttp_connection_get_peer(connection, &address, &port)
        return address.map { String(cString: $0) } ?? "-"
    }

    private func addHeader(_ request: OpaquePointer, _ name: String, _ value: String) {
        evhttp_add_header(evhttp_request_get_output_headers(request), name, value)
    }

    private func sendRedirect(_ request: OpaquePointer, location: String, reason: String?) {
        addHeader(request, "Location", location)
        addHeader(request, "Cache-Control", "no-store")
        addHeader(request, "Referrer-Policy", "no-referrer")
        if let reason { addHeader(request, "X-Linkout-Reason", reason) }
        let bev = headDeadlines.hasDeadlines ? HeadDeadlines.bufferevent(of: request) : nil
        evhttp_send_reply(request, 302, "Found", nil)
        headDeadlines.answered(bev)
    }

    private static let robots = Array("User-agent: *\nDisallow: /\n".utf8)

    /// The shopper's page language: their browser's choice among ours, else the link's country's, else
    /// English. Read only when a page is sent.
    private func language(_ request: OpaquePointer, country: String?) -> Int {
        let header = evhttp_find_header(evhttp_request_get_input_headers(request), "Accept-Language").map { String(cString: $0) }
        return ShopperLanguage.choose(acceptLanguage: header, country: country)
    }

    private func sendPage(_ request: OpaquePointer, _ kind: PageKind, language: Int) {
        let (code, phrase): (Int32, String) = switch kind.status {
        case 400: (400, "Bad Request")
        case 404: (404, "Not Found")
        case 405: (405, "Method Not Allowed")
        case 429: (429, "Too Many Requests")
        default: (503, "Service Unavailable")
        }
        addHeader(request, "Content-Type", "text/html; charset=utf-8")
        addHeader(request, "Content-Language", ShopperLanguage.codes[language])
        addHeader(request, "Vary", "Accept-Language")
        addHeader(request, "Cache-Control", "no-store")
        addHeader(request, "Referrer-Policy", "no-referrer")
        addHeader(request, "X-Content-Type-Options", "nosniff")
        addHeader(request, "Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
        send(request, code, phrase, serving.pages.page(kind, language: language))
    }

    private func sendJSON(_ request: OpaquePointer, _ code: Int32, _ phrase: String, _ json: String) {
        addHeader(request, "Content-Type", "application/json")
        addHeader(request, "Cache-Control", "no-store")
        send(request, code, phrase, Array((json + "\n").utf8))
    }

    private func sendText(_ request: OpaquePointer, _ code: Int32, _ phrase: String, _ text: String) {
        addHeader(request, "Content-Type", "text/plain; charset=utf-8")
        addHeader(request, "Cache-Control", "no-store")
        send(request, code, phrase, Array(text.utf8))
    }

    private func send(_ request: OpaquePointer, _ code: Int32, _ phrase: String, _ body: [UInt8]) {
        let buffer = evbuffer_new()
        body.withUnsafeBytes { _ = evbuffer_add(buffer, $0.baseAddress, $0.count) }
        let bev = headDeadlines.hasDeadlines ? HeadDeadlines.bufferevent(of: request) : nil
        evhttp_send_reply(request, code, phrase, buffer)
        evbuffer_free(buffer)
        headDeadlines.answered(bev)
    }
}

/// The core's view of an evhttp request: headers and the peer read on demand, from evhttp's own memory.
private struct EvhttpRequestContext: RequestContext {
    let request: OpaquePointer
    unowned let loop: EventLoop
    /// The loop's lazily resolved client address (behind trusted proxies).
    let client: () -> String

    func header(_ name: String) -> String? {
        evhttp_find_header(evhttp_request_get_input_headers(request), name).map { String(cString: $0) }
    }

    func peerAddress() -> String { EventLoop.peer(request) }

    func geoCountry() -> String? {
        loop.geoCountry(client: client())
    }
}
