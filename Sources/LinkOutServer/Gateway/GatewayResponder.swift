import CoreMetrics
import Foundation
import Glibc
import LinkOutCore
import LinkOutStore
import Logging

/// What the gateway's responder needs of the running server, and nothing more: built once by the
/// composition root (`LinkOutServer.start`) and handed to every loop, or by a test with stand-ins, so a
/// responder can be made and asked without a server, a store or a socket.
struct GatewayServices {
    /// The rules and pages a loop starts with; a reload hands each loop a new one (`install`).
    var serving: ServingState
    var settings: ServerSettings
    /// The writer: queues a visit with the ticket that answers it once committed; false when it is full or
    /// stopping (then nothing is promised: the 503 page). With `wake` false an idle writer sleeps on
    /// until `wakeWriter` (`RecordWriter.wake`).
    var submit: @Sendable (VisitRecord, ReplyTicket, _ wake: Bool) -> Bool
    var wakeWriter: @Sendable () -> Void
    /// The writer: a refusal for the dashboard, counted in the store with the next batch.
    var noteRefusal: @Sendable (_ link: String, _ reason: String, _ atMs: Int64) -> Void
    /// What `/readyz` answers now.
    var readiness: @Sendable () -> LinkOutServer.Readiness
    var metrics: GatewayMetrics
    /// Says which paths unrouted tokens arrive on.
    var unroutedLog: UnroutedLog
    /// nil when the access log is off.
    var accessLog: AccessLog?
    /// With a `notifications` section: its path reads a body, screened here and verified there.
    var notifications: NotificationIntake?
    /// With payment providers: their paths read a body, handed to the intake.
    var payments: PaymentIntake?
    var logger: Logger
}

/// One loop thread of the shoppers' listener: the gateway's rules over an `HTTPLoop`. It turns each request
/// into a `Decision` (the core's `Gateway.decide`), hands visits to the writer, and makes the answer a
/// `Reply` (`ShopperReplies`); the loop writes it, and `answered` logs it, whichever way it was made.
final class GatewayResponder: HTTPResponder, @unchecked Sendable {
    let index: Int
    private let services: GatewayServices
    let http: HTTPLoop

    // This loop's thread only: unchecked exclusivity, as `HTTPConnection`'s variables.
    /// The rules and pages this loop answers with; replaced whole by a reload, between two requests.
    @exclusivity(unchecked) private var serving: ServingState
    /// This loop's share of the per-client rate limit (a client's connections spread over the loops).
    @exclusivity(unchecked) private var limiter: RateLimiter?
    private let loopCount: Int
    /// `notifications.path` when Apple's notifications are on: the one path with a body.
    private let notificationPath: [UInt8]?
    private let notificationBodyLimit: Int
    /// This loop's share of `notifications.rateLimit`, checked before a notification's body is decoded.
    @exclusivity(unchecked) private var notificationLimiter: RateLimiter?
    /// The payment providers' webhook paths, each with its body limit.
    private let providerPaths: [(path: [UInt8], provider: PaymentProvider, limit: Int)]
    /// Answers made later: visits at the writer (strict durability) and notifications at the intake.
    @exclusivity(unchecked) private var owed = 0
    /// Strict durability: a visit's answer waits for its commit. Fixed for the life of the process.
    private let strict: Bool
    /// Visits handed to the writer without waking it, and whether the last round of events handed any.
    @exclusivity(unchecked) private var unwoken = 0
    @exclusivity(unchecked) private var submittedThisRound = false
    /// The client of the request being answered, once `client(_:)` has worked it out; nil between requests.
    @exclusivity(unchecked) private var resolvedClient: String?
    var owesAnswers: Bool { owed > 0 }

    /// Strict durability only: its visits wake the writer at the end of a burst (`roundEnded`).
    var watchesRounds: Bool { strict }

    /// The writer is woken once the loop's burst of visits is over: after a round of events that handed it
    /// none (the loop runs a round without waiting while visits are unwoken), or after a round that leaves
    /// `wakeWriterAfter` or more unwoken, so a loop that never runs out of work still wakes it
    /// (`RecordWriter.wake` says why).
    func roundEnded() -> Bool {
        guard unwoken > 0 else { return false }
        if submittedThisRound && unwoken < Self.wakeWriterAfter {
            submittedThisRound = false
            return true
        }
        services.wakeWriter()
        unwoken = 0
        submittedThisRound = false
        return false
    }

    static let wakeWriterAfter = 64

    /// Makes the loop (its event_base, not yet listening: `bind`), so a test can ask the responder
    /// without a socket.
    init(index: Int, loopCount: Int, services: GatewayServices) throws {
        self.index = index
        self.loopCount = loopCount
        self.services = services
        self.strict = services.settings.durability == .strict
        self.serving = services.serving
        self.limiter = Self.limiter(for: services.serving.gateway.config.rateLimit, loops: loopCount)
        let notifications = services.notifications?.settings
        notificationPath = notifications.map { Array($0.path.utf8) }
        notificationBodyLimit = notifications.map { Int($0.maxBodyBytes) } ?? 0
        notificationLimiter = notifications.flatMap { Self.limiter(for: $0.rateLimit, loops: loopCount) }
        providerPaths = (services.payments?.settings.providers ?? []).map { (Array($0.path.utf8), $0.provider, $0.maxBodyBytes) }
        let settings = services.settings
        // Bodies come only on the notification path; without it none is read, and the deadline is moot.
        http = try HTTPLoop(
            purpose: "gateway", headTimeoutSeconds: settings.requestHeadTimeoutSeconds, idleTimeoutSeconds: settings.idleTimeoutSeconds,
            bodyTimeoutSeconds: notifications?.bodyTimeoutSeconds ?? settings.idleTimeoutSeconds,
            steerIndex: UInt32(loopCount), parser: Self.parser(for: services.serving.gateway.config))
        http.responder = self
    }

    /// Listens on `listen` (SO_REUSEPORT: every loop binds the same address); returns the port bound.
    @discardableResult
    func bind(_ listen: ListenAddress) throws -> Int {
        try http.bind(listen, backlog: 1024)
    }

    func run() { http.run() }

    private static func limiter(for policy: RateLimiter.Policy?, loops: Int) -> RateLimiter? {
        guard let policy else { return nil }
        let share = Double(max(1, loops))
        return RateLimiter(policy: RateLimiter.Policy(
            ratePerSecond: policy.ratePerSecond / share, burst: max(1, policy.burst / share)))
    }

    /// The parser keeps the two headers the config may name besides the ones the gateway always reads: the
    /// trusted proxies' forwarding header and their country header. A target may fill nearly the whole
    /// head, so a long token (up to `tokens.maxLength`, 8 KiB, percent-encoded or not) gets the gateway's
    /// own `token_too_long` page rather than a bare 414; only what no head could hold is 414.
    private static func parser(for config: GatewayConfig) -> RequestHeadParser {
        var extra = [config.proxies.header.rawValue]
        if let country = config.proxies.countryHeader { extra.append(country) }
        return RequestHeadParser(extraHeaders: extra, maxTargetBytes: RequestHeadParser.defaultMaxHeadBytes - 64)
    }

    // MARK: Requests

    func bodyLimit(for request: HTTPRequest) -> Int {
        guard request.method == .post else { return 0 }
        if let notificationPath, request.path.elementsEqual(notificationPath) { return notificationBodyLimit }
        return providerPaths.first { request.path.elementsEqual($0.path) }?.limit ?? 0
    }

    func refused(_ refusal: RequestRefusal, request: HTTPRequest?, facts: inout ExchangeFacts) -> Reply {
        // A refused head was not read: its Accept-Language is unknown, so the page is in English.
        let language = request.map { self.language($0, country: nil) } ?? ShopperLanguage.english
        switch refusal {
        case .head(let problem):
            return ShopperReplies.refusedHead(
                status: problem.status, reason: problem.rawValue, language: language, catalog: serving.pages.catalog,
                access: ReplyAccess(route: "malformed", reason: problem.rawValue, count: .malformed))
        case .body(let tooLarge):
            if tooLarge, let request, isNotificationPath(request) {
                services.notifications?.refused(
                    NotificationRefusal(.bodyTooLarge, "a body of \(request.head.contentLength) bytes, over notifications.maxBodyBytes"),
                    client: clientAddress(request), bytes: request.head.contentLength)
            }
            return ShopperReplies.refusedHead(
                status: tooLarge ? 413 : 400, reason: tooLarge ? "body_too_large" : HeadProblem.bodyNotAllowed.rawValue,
                language: language, catalog: serving.pages.catalog,
                access: ReplyAccess(
                    route: "body_refused", reason: tooLarge ? "body_too_large" : HeadProblem.bodyNotAllowed.rawValue, count: .malformed))
        }
    }

    func respond(to request: HTTPRequest, exchange: Exchange, facts: inout ExchangeFacts) -> Reply? {
        let arrivedMs = facts.arrivedMs
        resolvedClient = nil
        defer { if services.accessLog != nil { facts.client = client(request) } }

        let method: RequestMethod = switch request.method {
        case .get: .get
        case .head: .head
        default: .other
        }
        let target = request.target
        if isNotificationPath(request) {
            return takeNotification(request, exchange: exchange, client: client(request), nowMs: arrivedMs)
        }
        if !providerPaths.isEmpty, let provider = providerPaths.first(where: { request.path.elementsEqual($0.path) })?.provider {
            return takeWebhook(request, provider: provider, exchange: exchange, client: client(request))
        }
        // Link-out requests, valid or not, count against the client's rate; health checks do not. Checked
        // before deciding, so a client over its rate costs a path look-up, not a token's decoding.
        if limiter != nil, method != .other, let linkIndex = serving.gateway.linkIndex(target: target),
           !limiter!.allow(client: client(request).utf8, nowMs: arrivedMs) {
            let link = serving.gateway.config.links[linkIndex]
            return tooManyRequests(request, country: link.country, route: link.id, link: LinkReference(index: linkIndex, id: link.id))
        }
        let context = LoopRequestContext(request: request, loop: self)
        let decision = serving.gateway.decide(method: method, target: target, nowMs: arrivedMs, context: context)

        // Consumed: the redirect's record and strings move on to the writer rather than being copied.
        switch consume decision {
        case .health:
            return Self.healthReply
        case .readiness:
            return Self.readinessReply(services.readiness())
        case .notFound:
            return page(.notFound, request, country: nil, access: ReplyAccess(route: "not_found", count: .notFound))
        case .favicon:
            return ShopperReplies.favicon
        case .robots:
            return ShopperReplies.robots
        case .methodNotAllowed:
            return page(.methodNotAllowed, request, country: nil, extra: [ReplyHeader("Allow", "GET, HEAD")],
                        access: ReplyAccess(route: "method_not_allowed", count: .methodNotAllowed))
        case .reject(let refusal):
            // The dashboard's refusals by reason: counted in the store with the next batch, so they last.
            services.noteRefusal(refusal.link, refusal.rejection.reason.rawValue, arrivedMs)
            var extra = [ReplyHeader("X-Linkout-Reason", refusal.rejection.reason.rawValue)]
            if let field = refusal.rejection.field { extra.append(ReplyHeader("X-Linkout-Reason-Field", field.rawValue)) }
            let reason = refusal.rejection.field.map { "\(refusal.rejection.reason.rawValue):\($0.rawValue)" } ?? refusal.rejection.reason.rawValue
            return page(PageKind.refusal(refusal.rejection.reason), request,
                        country: serving.gateway.config.links[refusal.linkIndex].country, extra: extra,
                        access: ReplyAccess(route: refusal.link, reason: reason, count: .link(
                            LinkReference(index: refusal.linkIndex, id: refusal.link), .rejected(refusal.rejection.reason))))
        case .redirect(let redirect):
            return linkOut(redirect, request: request, exchange: exchange, arrivedMs: arrivedMs)
        case .recordThenNotFound(let visit):
            return recordThenNotFound(visit, request: request, exchange: exchange, arrivedMs: arrivedMs)
        }
    }

    /// A link-out with a visit to record: relaxed durability answers now, strict after the commit.
    private func linkOut(
        _ redirect: consuming Redirect, request: HTTPRequest, exchange: Exchange, arrivedMs: Int64
    ) -> Reply? {
        // The two fields needed, not the whole `Link` (a copy is a retain and a release of each of its strings).
        let links = serving.gateway.config.links
        let country = links[redirect.linkIndex].country
        let reference = LinkReference(index: redirect.linkIndex, id: links[redirect.linkIndex].id)
        let route = redirect.unroutedPath == nil ? redirect.link : Gateway.unroutedLink
        // Unrouted paths are not link paths, so the limiter did not see them before.
        if redirect.unroutedPath != nil, limiter != nil, !limiter!.allow(client: client(request).utf8, nowMs: arrivedMs) {
            return tooManyRequests(request, country: nil, route: route, link: reference)
        }
        if let refusal = redirect.refusal {
            // Refused, though sent on (onInvalidToken: redirect): a refusal on the dashboard too, as in the
            // metrics; its visit also counts as kind `untokened`.
            services.noteRefusal(route, refusal.reason.rawValue, arrivedMs)
        }
        let id: String?
        let destination: String
        let record = redirect.record
        switch record {
        case .token(let visit): (id, destination) = (visit.externalPurchaseId, visit.destination)
        case .untokened(let visit): (id, destination) = (nil, visit.destination)
        }
        let count: ReplyCount = if let refusal = redirect.refusal {
            .link(reference, .redirectedWithoutToken(refusal.reason, allDown: redirect.allDown))
        } else if case .untokened(let visit) = record, visit.reason == .tap {
            .link(reference, .tapped(destination: redirect.destinationIndex, allDown: redirect.allDown))
        } else {
            .link(reference, .redirected(destination: redirect.destinationIndex, allDown: redirect.allDown))
        }
        let access = ReplyAccess(
            route: route, reason: redirect.refusal?.reason.rawValue, externalPurchaseId: id, destination: destination,
            kind: redirect.kind == .shopper ? nil : redirect.kind.rawValue, count: count)
        let relaxed = !strict
        var ticket = relaxed ? ReplyTicket.answered(loop: index) : ReplyTicket(
            loop: index, exchange: exchange, location: redirect.location, reason: redirect.refusal?.reason.rawValue, access: access)
        // The page language only matters if a page is sent (503 after a failed commit).
        if !relaxed { ticket.language = language(request, country: country) }
        if let refused = submit(record, ticket: ticket, request: request, access: access, country: country) { return refused }
        // The record's metrics, counted when it is handed over (the answer's are counted at the exit): a
        // failed commit later shows as linkout_commit_failures_total.
        if let path = redirect.unroutedPath {
            services.metrics.unroutedTokens.increment()
            services.unroutedLog.note(path: path, link: redirect.link, nowMs: arrivedMs)
        }
        if let unusual = redirect.unusualToken { services.metrics.unusualTokens[unusual]?.increment() }
        serving.linkMetrics[redirect.linkIndex].visits[redirect.kind]?.increment()
        guard relaxed else {
            owed += 1
            return nil
        }
        return ShopperReplies.redirect(location: redirect.location, reason: redirect.refusal?.reason.rawValue, access: access)
    }

    /// A valid token on a path no link serves: recorded as link `unrouted`, then the 404 page, after the
    /// commit as a 302 would be (relaxed: at once). It belongs to no link: no link counters.
    private func recordThenNotFound(
        _ visit: UnroutedVisit, request: HTTPRequest, exchange: Exchange, arrivedMs: Int64
    ) -> Reply? {
        // Unrouted paths are not link paths, so the limiter did not see them before.
        if limiter != nil, !limiter!.allow(client: client(request).utf8, nowMs: arrivedMs) {
            return tooManyRequests(request, country: nil, route: Gateway.unroutedLink, link: nil)
        }
        let access = ReplyAccess(
            route: Gateway.unroutedLink, externalPurchaseId: visit.record.externalPurchaseId,
            kind: visit.kind == .shopper ? nil : visit.kind.rawValue, count: .notFound)
        let relaxed = !strict
        var ticket = relaxed ? ReplyTicket.answered(loop: index) : ReplyTicket(
            loop: index, exchange: exchange, location: "", reason: nil, access: access)
        ticket.notFound = true
        ticket.language = language(request, country: nil)
        if let refused = submit(.token(visit.record), ticket: ticket, request: request, access: access, country: nil) { return refused }
        services.metrics.unroutedTokens.increment()
        services.unroutedLog.note(path: visit.path, link: nil, nowMs: arrivedMs)
        if let unusual = visit.unusualToken { services.metrics.unusualTokens[unusual]?.increment() }
        guard relaxed else {
            owed += 1
            return nil
        }
        return ShopperReplies.page(.notFound, language: ticket.language, catalog: serving.pages.catalog, access: access)
    }

    /// Hands a visit to the writer; nil when it took it. While stopping, or when the writer is full,
    /// nothing new is promised: the 503 page, nothing recorded.
    private func submit(_ record: VisitRecord, ticket: ReplyTicket, request: HTTPRequest, access: ReplyAccess, country: String?) -> Reply? {
        // Strict: the writer is woken once the burst is over (`roundEnded`). Relaxed: at once, as it waits
        // for its commit window anyway, and holding rounds would cost the loop a system call per burst.
        if !http.isStopping, services.submit(record, ticket, !strict) {
            if strict {
                unwoken += 1
                submittedThisRound = true
            }
            return nil
        }
        var refused = access
        refused.reason = "store_unavailable"
        refused.destination = nil
        refused.count = access.count.unavailable
        return page(.unavailable, request, country: country, extra: [ReplyHeader("Retry-After", "1")], access: refused)
    }

    /// The answer for a visit once it is recorded (or, relaxed, once it is queued).
    private func committedReply(_ ticket: ReplyTicket, access: ReplyAccess) -> Reply {
        if ticket.notFound {
            return ShopperReplies.page(.notFound, language: ticket.language, catalog: serving.pages.catalog, access: access)
        }
        return ShopperReplies.redirect(location: ticket.location, reason: ticket.reason, access: access)
    }

    private func tooManyRequests(_ request: HTTPRequest, country: String?, route: String, link: LinkReference?) -> Reply {
        page(.tooManyRequests, request, country: country,
             extra: [ReplyHeader("Retry-After", "1"), ReplyHeader("X-Linkout-Reason", "rate_limited")],
             access: ReplyAccess(route: route, reason: "rate_limited", count: link.map { .link($0, .rateLimited) } ?? .uncounted))
    }

    private func page(_ kind: PageKind, _ request: HTTPRequest, country: String?, extra: [ReplyHeader] = [], access: ReplyAccess) -> Reply {
        ShopperReplies.page(kind, language: language(request, country: country), catalog: serving.pages.catalog, extra: extra, access: access)
    }

    /// What `/healthz` answers, here and on the admin listener.
    static let healthReply = ShopperReplies.text(200, "ok\n", access: ReplyAccess(route: "healthz", count: .health))

    /// What `/readyz` answers, here and on the admin listener.
    static func readinessReply(_ readiness: LinkOutServer.Readiness) -> Reply {
        ShopperReplies.text(
            Int(readiness.status), readiness.why + "\n",
            extra: readiness.degraded ? [ReplyHeader("X-Linkout-Degraded", "spool")] : [],
            access: ReplyAccess(route: "readyz", count: .health))
    }

    // MARK: The one exit

    func answered(_ reply: Reply, facts: ExchangeFacts, peer: @autoclosure () -> String) {
        count(reply.access.count)
        guard let accessLog = services.accessLog else { return }
        accessLog.record(AccessRecord(
            time: facts.arrivedMs, method: facts.method?.name ?? "-", route: reply.access.route, status: reply.status,
            reason: reply.access.reason, externalPurchaseId: reply.access.externalPurchaseId,
            destination: reply.status == 302 ? reply.access.destination : nil, kind: reply.access.kind,
            client: facts.client ?? peer(), durationMicroseconds: TimeSource.system.monotonicMicroseconds() - facts.startedMicroseconds))
    }

    private func count(_ count: ReplyCount) {
        let metrics = services.metrics
        switch count {
        case .uncounted: return
        case .health: metrics.healthChecks.increment()
        case .notFound: metrics.notFound.increment()
        case .methodNotAllowed: metrics.methodNotAllowed.increment()
        case .malformed: metrics.malformed.increment()
        case .link(let link, let outcome):
            guard let counters = linkMetrics(link) else { return }
            switch outcome {
            case .rateLimited:
                counters.rateLimited.increment()
            case .rejected(let reason):
                counters.rejected.increment()
                counters.rejections[reason]?.increment()
            case .unavailable(let refusal):
                if let refusal { counters.rejections[refusal]?.increment() }
                counters.unavailable.increment()
            case .redirected(let destination, let allDown):
                counters.redirected.increment()
                if destination < counters.destinations.count { counters.destinations[destination].increment() }
                if allDown { counters.allDown.increment() }
            case .redirectedWithoutToken(let reason, let allDown):
                counters.rejections[reason]?.increment()
                counters.redirectedWithoutToken.increment()
                if allDown { counters.allDown.increment() }
            case .tapped(let destination, let allDown):
                counters.tapped.increment()
                if destination < counters.destinations.count { counters.destinations[destination].increment() }
                if allDown { counters.allDown.increment() }
            }
        }
    }

    /// The link's counters in the config serving now. A reload between a strict link-out's decision and
    /// its answer may have moved the link (found again by id) or dropped it (not counted).
    private func linkMetrics(_ link: LinkReference) -> LinkMetrics? {
        let links = serving.gateway.config.links
        if link.index < links.count, links[link.index].id == link.id { return serving.linkMetrics[link.index] }
        return links.firstIndex { $0.id == link.id }.map { serving.linkMetrics[$0] }
    }

    func expired(_ expiry: ConnectionLife.Expiry, request: HTTPRequest?) {
        guard expiry == .slowHead || expiry == .slowBody else { return }
        services.metrics.slowClientsClosed.increment()
        if expiry == .slowBody, let request, isNotificationPath(request) {
            services.notifications?.refused(
                NotificationRefusal(.slowBody, "the body was not complete within notifications.bodyTimeoutSeconds of its head"),
                client: clientAddress(request), bytes: request.head.contentLength)
        }
    }

    func acceptPaused(error: String) {
        services.logger.warning("accept failed; pausing accepts for 100 ms", metadata: ["error": "\(error)", "loop": "\(index)"])
    }

    // MARK: Apple's notifications

    private func isNotificationPath(_ request: HTTPRequest) -> Bool {
        guard let notificationPath else { return false }
        return request.path.elementsEqual(notificationPath)
    }

    /// `POST` on the notification path, refused as cheaply as it can be: over the client's rate (429),
    /// then whatever `screen` finds without a signature (400), then over what signature checks may cost
    /// (503), all here; the rest goes to the intake thread (503 when its queue is full), and the answer
    /// comes back through the loop's mailbox (`post(_ reply:)`). Anything else there is 405.
    private func takeNotification(_ request: HTTPRequest, exchange: Exchange, client: String, nowMs: Int64) -> Reply? {
        guard request.method == .post else {
            return ShopperReplies.json(405, #"{"error":"use POST"}"#, extra: [ReplyHeader("Allow", "POST")],
                                       access: ReplyAccess(route: "notifications", reason: "method_not_allowed", count: .methodNotAllowed))
        }
        // The path is set only with an intake; without one nothing could ever answer, so never nil here.
        guard let intake = services.notifications else {
            return ShopperReplies.json(503, #"{"error":"busy"}"#, extra: [ReplyHeader("Retry-After", "1")],
                                       access: ReplyAccess(route: "notifications", reason: "busy"))
        }
        func refuse(_ refusal: NotificationRefusal, status: Int, retry: Bool) -> Reply {
            intake.refused(refusal, client: client, bytes: request.body.count)
            return ShopperReplies.json(
                status, #"{"error":"\#(refusal.reason.rawValue)"}"#, extra: retry ? [ReplyHeader("Retry-After", "1")] : [],
                access: ReplyAccess(route: "notifications", reason: refusal.reason.rawValue))
        }
        if notificationLimiter != nil, !notificationLimiter!.allow(client: client.utf8, nowMs: nowMs) {
            return refuse(NotificationRefusal(.rateLimited, "over notifications.rateLimit"), status: 429, retry: true)
        }
        let screened: ScreenedNotification
        do throws(NotificationRefusal) {
            screened = try intake.verifier.screen(body: Array(request.body))
        } catch {
            return refuse(error, status: 400, retry: false)
        }
        if let refusal = intake.budgetRefusal(for: screened, nowMs: nowMs) {
            return refuse(refusal, status: 503, retry: true)
        }
        guard !http.isStopping, intake.submit(NotificationIntake.Job(loop: index, exchange: exchange, screened: screened, client: client)) else {
            return refuse(NotificationRefusal(.busy, http.isStopping ? "stopping" : "the intake's queue is full"), status: 503, retry: true)
        }
        owed += 1
        return nil
    }

    /// Called from the intake thread with the answer for a notification this loop handed over.
    func post(_ reply: NotificationIntake.Reply) {
        http.post { [self] in
            owed -= 1
            http.answer(reply.exchange, ShopperReplies.json(
                Int(reply.status), reply.json, access: ReplyAccess(route: "notifications", reason: reply.reason)))
        }
    }

    // MARK: Payment providers' webhooks

    /// `POST` on a provider's path: the body and its signature header go to the payment intake thread, and
    /// the answer comes back through the loop's mailbox (`post(webhook:)`). Anything else there is 405.
    private func takeWebhook(_ request: HTTPRequest, provider: PaymentProvider, exchange: Exchange, client: String) -> Reply? {
        let route = "webhook_" + provider.rawValue
        guard request.method == .post else {
            return ShopperReplies.json(405, #"{"error":"use POST"}"#, extra: [ReplyHeader("Allow", "POST")],
                                       access: ReplyAccess(route: route, reason: "method_not_allowed", count: .methodNotAllowed))
        }
        let signature = request.text(provider == .stripe ? request.head.stripeSignature : request.head.paddleSignature)
        guard !http.isStopping, let intake = services.payments, intake.submit(PaymentIntake.Job(
            loop: index, exchange: exchange, provider: provider, body: Array(request.body), signature: signature, client: client)) else {
            return ShopperReplies.json(503, #"{"error":"busy"}"#, extra: [ReplyHeader("Retry-After", "1")],
                                       access: ReplyAccess(route: route, reason: "busy"))
        }
        owed += 1
        return nil
    }

    /// Called from the payment intake thread with the answer for a webhook this loop handed over.
    func post(webhook reply: PaymentIntake.Reply, provider: PaymentProvider) {
        http.post { [self] in
            owed -= 1
            http.answer(reply.exchange, ShopperReplies.json(
                Int(reply.status), reply.json, access: ReplyAccess(route: "webhook_" + provider.rawValue, reason: reply.reason)))
        }
    }

    /// The proxies the serving config trusts.
    fileprivate var proxies: ProxySettings { serving.gateway.config.proxies }

    /// The client's country from the GeoIP database, if the server has one.
    fileprivate func geoCountry(client: String) -> String? {
        serving.geoIP?.country(forAddress: client)
    }

    // MARK: Mailbox

    /// Called from the writer thread with tickets of this loop whose batch finished.
    func post(_ tickets: [ReplyTicket], committed: Bool) {
        http.post { [self] in
            for ticket in tickets {
                guard let exchange = ticket.exchange, let access = ticket.access else { continue }
                owed -= 1
                if committed {
                    http.answer(exchange, committedReply(ticket, access: access))
                } else {
                    var failed = access
                    failed.reason = "store_failed"
                    failed.destination = nil
                    failed.count = access.count.unavailable
                    http.answer(exchange, ShopperReplies.page(
                        .unavailable, language: ticket.language, catalog: serving.pages.catalog,
                        extra: [ReplyHeader("Retry-After", "1")], access: failed))
                }
            }
        }
    }

    /// Called from the main thread on a reload: the loop switches to `state` at its next wake-up, so a
    /// request is answered wholly by the old rules or wholly by the new.
    func install(_ state: ServingState) {
        http.post { [self] in
            if state.gateway.config.rateLimit != serving.gateway.config.rateLimit {
                limiter = Self.limiter(for: state.gateway.config.rateLimit, loops: loopCount)
            }
            serving = state
            // Connections opened from now on read the headers the new config names.
            http.parserTemplate = Self.parser(for: state.gateway.config)
        }
    }

    /// Called from the main thread when the gateway stops.
    func requestStop() {
        http.requestStop()
    }

    // MARK: Request facts

    /// The request's client (`clientAddress`), worked out once per request and only when needed (rate
    /// limit, GeoIP, access log). Kept on the responder, which answers one request at a time, rather than in
    /// a closure over the request: that closure and its cache were two allocations per request.
    fileprivate func client(_ request: HTTPRequest) -> String {
        if let resolvedClient { return resolvedClient }
        let address = clientAddress(request)
        resolvedClient = address
        return address
    }

    /// The client: the peer, or, when the peer is a trusted proxy, the address its forwarding header names.
    private func clientAddress(_ request: HTTPRequest) -> String {
        let direct = request.peer
        let proxies = serving.gateway.config.proxies
        guard !proxies.trusted.isEmpty, var list = request.text(request.head.extra0) else { return direct }
        if proxies.header == .forwarded { list = TrustedProxies.forwardedFor(fromForwarded: list) }
        return proxies.trusted.client(peer: direct, forwardedFor: list) ?? direct
    }

    /// The shopper's page language: their browser's choice among ours, else the link's country's, else
    /// English. Read only when a page is sent.
    private func language(_ request: HTTPRequest, country: String?) -> Int {
        ShopperLanguage.choose(acceptLanguage: request.text(request.head.acceptLanguage), country: country)
    }
}

/// The core's view of a request: headers and the peer read on demand, from the connection's input.
private struct LoopRequestContext: RequestContext {
    let request: HTTPRequest
    /// `unowned(unsafe)`: the context lives only within the responder's own `respond` call.
    unowned(unsafe) let loop: GatewayResponder

    /// Which configured headers the parser kept as its extras (the forwarding header, the country header).
    private var proxies: ProxySettings { loop.proxies }

    func header(_ name: String) -> String? {
        // `request.head.…` each time, not a local copy of the head (a few hundred bytes, copied per call).
        switch name {
        case "User-Agent": return request.text(request.head.userAgent)
        case "Purpose": return request.text(request.head.purpose)
        case "Sec-Purpose": return request.text(request.head.secPurpose)
        case "Accept-Language": return request.text(request.head.acceptLanguage)
        case "Host": return request.text(request.head.host)
        default:
            // The config's country header, kept by the parser as its second extra header.
            if let country = proxies.countryHeader, country.caseInsensitiveEquals(name) { return request.text(request.head.extra1) }
            if proxies.header.rawValue.caseInsensitiveEquals(name) { return request.text(request.head.extra0) }
            return nil
        }
    }

    func peerAddress() -> String { request.peer }

    func clientAddress() -> String { loop.client(request) }

    func geoCountry() -> String? {
        loop.geoCountry(client: loop.client(request))
    }
}

extension String {
    fileprivate func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && lowercased() == other.lowercased()
    }
}
