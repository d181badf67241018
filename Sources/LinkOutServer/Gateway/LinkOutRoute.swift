import CoreMetrics
import LinkOutCore
import LinkOutStore
import Logging

/// What the link-out route needs of the running server, and nothing more: built once by the composition
/// root and handed to every loop's route, or by a test with stand-ins, so a route can be asked without a
/// server, a store or a socket.
struct LinkOutServices {
    var settings: ServerSettings
    /// The writer: queues a visit with the ticket that answers it once committed; false when it is full or
    /// stopping (then nothing is promised: the 503 page). With `wake` false an idle writer sleeps on
    /// until `wakeWriter` (`RecordWriter.wake`).
    var submit: @Sendable (VisitRecord, ReplyTicket, _ wake: Bool) -> Bool
    var wakeWriter: @Sendable () -> Void
    /// The writer: a refusal for the dashboard, counted in the store with the next batch.
    var noteRefusal: @Sendable (_ link: String, _ reason: String, _ atMs: Int64) -> Void
    /// What `/readyz` answers now.
    var readiness: @Sendable () -> Readiness
    var metrics: GatewayMetrics
    /// Says which paths unrouted tokens arrive on.
    var unroutedLog: UnroutedLog
    /// Rate limits run on this clock's monotonic side: a step of the wall clock neither frees nor blocks a client.
    var clock: TimeSource
}

/// Every path of the shoppers' listener that no other route names: the links (a token's decision by the
/// core's `Gateway.decide`, its visit handed to the writer, the `302`), `/healthz`, `/readyz`, the
/// favicon, robots.txt and the 404 page. One per loop.
final class LinkOutRoute: ShopperRoute {
    private let services: LinkOutServices
    private let loop: Int
    private let loopCount: Int
    /// Strict durability: a visit's answer waits for its commit. Fixed for the life of the process.
    private let strict: Bool

    // The loop's thread only.
    /// This loop's share of the per-client rate limit (a client's connections spread over the loops).
    @exclusivity(unchecked) private var limiter: RateLimiter?
    /// Visits handed to the writer without waking it, and whether the last round of events handed any.
    @exclusivity(unchecked) private var unwoken = 0
    @exclusivity(unchecked) private var submittedThisRound = false

    init(loop: Int, loopCount: Int, serving: ServingState, services: LinkOutServices) {
        self.loop = loop
        self.loopCount = loopCount
        self.services = services
        self.strict = services.settings.durability == .strict
        self.limiter = RateLimiter.share(of: serving.gateway.config.rateLimit, loops: loopCount)
    }

    func install(_ state: ServingState) {
        limiter = RateLimiter.share(of: state.gateway.config.rateLimit, loops: loopCount)
    }

    // MARK: The writer's wake

    /// Strict durability only (the loop's `afterRound`): the writer is woken once the loop's burst of
    /// visits is over: after a round of events that handed it none (the loop runs a round without waiting
    /// while visits are unwoken), or after a round that leaves `wakeWriterAfter` or more unwoken, so a loop
    /// that never runs out of work still wakes it (`RecordWriter.wake` says why).
    var roundWatch: (() -> Bool)? { strict ? { [unowned self] in roundEnded() } : nil }

    private func roundEnded() -> Bool {
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

    // MARK: Requests

    func respond(to request: HTTPRequest, exchange: Exchange, arrivedMs: Int64, on listener: ShopperListener) -> Reply? {
        let method: RequestMethod =
            switch request.method {
            case .get: .get
            case .head: .head
            default: .other
            }
        let target = request.target
        // `listener.serving.…` each time, not a local copy of the state (a retain of each of its parts).
        // Link-out requests, valid or not, count against the client's rate; health checks do not. Checked
        // before deciding, so a client over its rate costs a path look-up, not a token's decoding.
        if limiter != nil, method != .other, let linkIndex = listener.serving.gateway.linkIndex(target: target), !allowed(request, listener)
        {
            let link = listener.serving.gateway.config.links[linkIndex]
            return tooManyRequests(
                request, listener, country: link.country, route: link.id, link: LinkReference(index: linkIndex, id: link.id))
        }
        let context = LinkOutRequestContext(request: request, listener: listener)
        let decision = listener.serving.gateway.decide(method: method, target: target, nowMs: arrivedMs, context: context)

        // Consumed: the redirect's record and strings move on to the writer rather than being copied.
        switch consume decision {
        case .health:
            return Readiness.healthReply
        case .readiness:
            return services.readiness().reply
        case .notFound:
            return listener.page(.notFound, request, country: nil, access: ReplyAccess(route: "not_found", count: .notFound))
        case .favicon:
            return ShopperReplies.favicon
        case .robots:
            return ShopperReplies.robots
        case .methodNotAllowed:
            return listener.page(
                .methodNotAllowed, request, country: nil, extra: [ReplyHeader("Allow", "GET, HEAD")],
                access: ReplyAccess(route: "method_not_allowed", count: .methodNotAllowed))
        case .reject(let refusal):
            // The dashboard's refusals by reason: counted in the store with the next batch, so they last.
            services.noteRefusal(refusal.link, refusal.rejection.reason.rawValue, arrivedMs)
            var extra = [ReplyHeader("X-Linkout-Reason", refusal.rejection.reason.rawValue)]
            if let field = refusal.rejection.field { extra.append(ReplyHeader("X-Linkout-Reason-Field", field.rawValue)) }
            let reason =
                refusal.rejection.field.map { "\(refusal.rejection.reason.rawValue):\($0.rawValue)" } ?? refusal.rejection.reason.rawValue
            return listener.page(
                PageKind.refusal(refusal.rejection.reason), request,
                country: listener.serving.gateway.config.links[refusal.linkIndex].country, extra: extra,
                access: ReplyAccess(
                    route: refusal.link, reason: reason,
                    count: .link(
                        LinkReference(index: refusal.linkIndex, id: refusal.link), .rejected(refusal.rejection.reason))))
        case .redirect(let redirect):
            return linkOut(redirect, request: request, exchange: exchange, arrivedMs: arrivedMs, listener)
        case .recordThenNotFound(let visit):
            return recordThenNotFound(visit, request: request, exchange: exchange, arrivedMs: arrivedMs, listener)
        }
    }

    /// Within the client's rate, on the monotonic clock.
    private func allowed(_ request: HTTPRequest, _ listener: ShopperListener) -> Bool {
        limiter!.allow(client: listener.client(request).utf8, atMs: services.clock.monotonicMilliseconds())
    }

    /// A link-out with a visit to record: relaxed durability answers now, strict after the commit.
    private func linkOut(
        _ redirect: consuming Redirect, request: HTTPRequest, exchange: Exchange, arrivedMs: Int64, _ listener: ShopperListener
    ) -> Reply? {
        // The two fields needed, not the whole `Link` (a copy is a retain and a release of each of its strings).
        let links = listener.serving.gateway.config.links
        let country = links[redirect.linkIndex].country
        let reference = LinkReference(index: redirect.linkIndex, id: links[redirect.linkIndex].id)
        let route = redirect.unroutedPath == nil ? redirect.link : Gateway.unroutedLink
        // Unrouted paths are not link paths, so the limiter did not see them before.
        if redirect.unroutedPath != nil, limiter != nil, !allowed(request, listener) {
            return tooManyRequests(request, listener, country: nil, route: route, link: reference)
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
        let count: ReplyCount =
            if let refusal = redirect.refusal {
                .link(reference, .redirectedWithoutToken(refusal.reason, allDown: redirect.allDown))
            } else if case .untokened(let visit) = record, visit.reason == .tap {
                .link(reference, .tapped(destination: redirect.destinationIndex, allDown: redirect.allDown))
            } else {
                .link(reference, .redirected(destination: redirect.destinationIndex, allDown: redirect.allDown))
            }
        let access = ReplyAccess(
            route: route, reason: redirect.refusal?.reason.rawValue, externalPurchaseId: id, destination: destination,
            kind: redirect.kind == .shopper ? nil : redirect.kind.rawValue, count: count)
        // The page language only matters if a page is sent (503 after a failed commit).
        let ticket: ReplyTicket =
            strict
            ? .parked(
                ParkedVisit(
                    loop: loop, exchange: exchange,
                    answer: .redirect(location: redirect.location, reason: redirect.refusal?.reason.rawValue),
                    access: access, language: listener.language(request, country: country))) : .answered
        if let refused = submit(record, ticket: ticket, request: request, access: access, country: country, listener) { return refused }
        // The record's metrics, counted when it is handed over (the answer's are counted at the exit): a
        // failed commit later shows as linkout_commit_failures_total.
        if let path = redirect.unroutedPath {
            services.metrics.unroutedTokens.increment()
            services.unroutedLog.note(path: path, link: redirect.link, nowMs: arrivedMs)
        }
        if let unusual = redirect.unusualToken { services.metrics.unusualTokens[unusual]?.increment() }
        listener.serving.linkMetrics[redirect.linkIndex].visits[redirect.kind]?.increment()
        guard !strict else { return nil }
        return ShopperReplies.redirect(location: redirect.location, reason: redirect.refusal?.reason.rawValue, access: access)
    }

    /// A valid token on a path no link serves: recorded as link `unrouted`, then the 404 page, after the
    /// commit as a 302 would be (relaxed: at once). It belongs to no link: no link counters.
    private func recordThenNotFound(
        _ visit: UnroutedVisit, request: HTTPRequest, exchange: Exchange, arrivedMs: Int64, _ listener: ShopperListener
    ) -> Reply? {
        // Unrouted paths are not link paths, so the limiter did not see them before.
        if limiter != nil, !allowed(request, listener) {
            return tooManyRequests(request, listener, country: nil, route: Gateway.unroutedLink, link: nil)
        }
        let access = ReplyAccess(
            route: Gateway.unroutedLink, externalPurchaseId: visit.record.externalPurchaseId,
            kind: visit.kind == .shopper ? nil : visit.kind.rawValue, count: .notFound)
        let language = listener.language(request, country: nil)
        let ticket: ReplyTicket =
            strict
            ? .parked(ParkedVisit(loop: loop, exchange: exchange, answer: .notFound, access: access, language: language)) : .answered
        if let refused = submit(.token(visit.record), ticket: ticket, request: request, access: access, country: nil, listener) {
            return refused
        }
        services.metrics.unroutedTokens.increment()
        services.unroutedLog.note(path: visit.path, link: nil, nowMs: arrivedMs)
        if let unusual = visit.unusualToken { services.metrics.unusualTokens[unusual]?.increment() }
        guard !strict else { return nil }
        return ShopperReplies.page(.notFound, language: language, catalog: listener.serving.pages.catalog, access: access)
    }

    /// Hands a visit to the writer; nil when it took it. While stopping, or when the writer is full,
    /// nothing new is promised: the 503 page, nothing recorded.
    private func submit(
        _ record: VisitRecord, ticket: ReplyTicket, request: HTTPRequest, access: ReplyAccess, country: String?, _ listener: ShopperListener
    ) -> Reply? {
        // Strict: the writer is woken once the burst is over (`roundEnded`). Relaxed: at once, as it waits
        // for its commit window anyway, and holding rounds would cost the loop a system call per burst.
        if !listener.isStopping, services.submit(record, ticket, !strict) {
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
        return listener.page(.unavailable, request, country: country, extra: [ReplyHeader("Retry-After", "1")], access: refused)
    }

    private func tooManyRequests(
        _ request: HTTPRequest, _ listener: ShopperListener, country: String?, route: String, link: LinkReference?
    ) -> Reply {
        listener.page(
            .tooManyRequests, request, country: country,
            extra: [ReplyHeader("Retry-After", "1"), ReplyHeader("X-Linkout-Reason", "rate_limited")],
            access: ReplyAccess(route: route, reason: "rate_limited", count: link.map { .link($0, .rateLimited) } ?? .uncounted))
    }
}

/// The core's view of a request: headers and the peer read on demand, from the connection's input.
private struct LinkOutRequestContext: RequestContext {
    let request: HTTPRequest
    /// `unowned(unsafe)`: the context lives only within the route's own `respond` call.
    unowned(unsafe) let listener: ShopperListener

    func header(_ name: String) -> String? {
        // `request.head.…` each time, not a local copy of the head (a few hundred bytes, copied per call).
        switch name {
        case "User-Agent": return request.text(request.head.userAgent)
        case "Purpose": return request.text(request.head.purpose)
        case "Sec-Purpose": return request.text(request.head.secPurpose)
        case "Accept-Language": return request.text(request.head.acceptLanguage)
        case "Host": return request.text(request.head.host)
        default:
            // The config's country header, kept by the parser as its second extra header; the forwarding
            // header as its first.
            let proxies = listener.serving.gateway.config.proxies
            if let country = proxies.countryHeader, country.caseInsensitiveEquals(name) { return request.text(request.head.extra1) }
            if proxies.header.rawValue.caseInsensitiveEquals(name) { return request.text(request.head.extra0) }
            return nil
        }
    }

    func peerAddress() -> String { request.peer }

    func clientAddress() -> String { listener.client(request) }

    func geoCountry() -> String? {
        listener.serving.geoIP?.country(forAddress: listener.client(request))
    }
}

extension String {
    fileprivate func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && lowercased() == other.lowercased()
    }
}
