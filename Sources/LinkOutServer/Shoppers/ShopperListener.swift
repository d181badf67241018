import CoreMetrics
import Foundation
import LinkOutCore
import Logging

/// One loop thread of the shoppers' listener: its `HTTPLoop` (the socket, the connections, the mailbox and
/// the answers it owes), the rules and pages it answers with, its table of routes, and the one exit every
/// answer leaves by (`answered`, `ShopperExit.swift`). It picks the route for each request and hands it
/// what every route needs (the client, the page language, the pages); what a path does is its route's.
final class ShopperListener: HTTPResponder, @unchecked Sendable {
    let index: Int
    let http: HTTPLoop
    private let routes: ShopperRoutes
    let metrics: GatewayMetrics
    /// nil when the access log is off.
    let accessLog: AccessLog?
    let logger: Logger

    // This loop's thread only: unchecked exclusivity, as `HTTPConnection`'s variables.
    /// The rules and pages this loop answers with; replaced whole by a reload, between two requests.
    @exclusivity(unchecked) private(set) var serving: ServingState
    /// The client of the request being answered, once `client(_:)` has worked it out; nil between requests.
    @exclusivity(unchecked) private var resolvedClient: String?

    /// `http` is this loop's mailbox too, made before the parts that answer through it (`LoopMailboxes`);
    /// the listener becomes its responder here. Nothing is bound: `bind`, so a test asks without a socket.
    init(
        index: Int, http: HTTPLoop, serving: ServingState, routes: ShopperRoutes, metrics: GatewayMetrics, accessLog: AccessLog?,
        logger: Logger
    ) {
        self.index = index
        self.http = http
        self.serving = serving
        self.routes = routes
        self.metrics = metrics
        self.accessLog = accessLog
        self.logger = logger
        http.responder = self
        // A route that hands work on at the end of a burst (strict durability's writer wake) hears each round.
        http.afterRound = routes.all.lazy.compactMap(\.roundWatch).first
    }

    /// The loop every shoppers' listener runs on: its head and body deadlines, its place among the
    /// `SO_REUSEPORT` group, and the headers the config names (`parser(for:)`).
    static func loop(count: Int, config: GatewayConfig, clock: TimeSource) throws -> HTTPLoop {
        let settings = config.server
        // Bodies come only on the notification and webhook paths; Apple's notifications set their deadline.
        return try HTTPLoop(
            purpose: "gateway", headTimeoutSeconds: settings.requestHeadTimeoutSeconds, idleTimeoutSeconds: settings.idleTimeoutSeconds,
            bodyTimeoutSeconds: config.notifications?.bodyTimeoutSeconds ?? settings.idleTimeoutSeconds,
            steerIndex: UInt32(count), parser: parser(for: config), clock: clock)
    }

    /// The parser keeps the two headers the config may name besides the ones the gateway always reads: the
    /// trusted proxies' forwarding header and their country header. A target may fill nearly the whole
    /// head, so a long token (up to `tokens.maxLength`, 8 KiB, percent-encoded or not) gets the gateway's
    /// own `token_too_long` page rather than a bare 414; only what no head could hold is 414.
    static func parser(for config: GatewayConfig) -> RequestHeadParser {
        var extra = [config.proxies.header.rawValue]
        if let country = config.proxies.countryHeader { extra.append(country) }
        return RequestHeadParser(extraHeaders: extra, maxTargetBytes: RequestHeadParser.defaultMaxHeadBytes - 64)
    }

    /// Listens on `listen` (SO_REUSEPORT: every loop binds the same address); returns the port bound.
    @discardableResult
    func bind(_ listen: ListenAddress) throws -> Int {
        try http.bind(listen, backlog: 1024)
    }

    func run() { http.run() }

    // MARK: Requests

    func bodyLimit(for request: HTTPRequest) -> Int {
        guard request.method == .post else { return 0 }
        return routes.route(for: request).bodyLimit(for: request)
    }

    func respond(to request: HTTPRequest, exchange: Exchange, facts: inout ExchangeFacts) -> Reply? {
        resolvedClient = nil
        defer { if accessLog != nil { facts.client = client(request) } }
        return routes.route(for: request).respond(to: request, exchange: exchange, arrivedMs: facts.arrivedMs, on: self)
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
            if tooLarge, let request { routes.route(for: request).bodyTooLarge(request, on: self) }
            let reason = tooLarge ? "body_too_large" : HeadProblem.bodyNotAllowed.rawValue
            return ShopperReplies.refusedHead(
                status: tooLarge ? 413 : 400, reason: reason, language: language, catalog: serving.pages.catalog,
                access: ReplyAccess(route: "body_refused", reason: reason, count: .malformed))
        }
    }

    func expired(_ expiry: ConnectionLife.Expiry, request: HTTPRequest?) {
        guard expiry == .slowHead || expiry == .slowBody else { return }
        metrics.slowClientsClosed.increment()
        if expiry == .slowBody, let request { routes.route(for: request).bodyTooSlow(request, on: self) }
    }

    func acceptPaused(error: String) {
        logger.warning("accept failed; pausing accepts for 100 ms", metadata: ["error": "\(error)", "loop": "\(index)"])
    }

    // MARK: From other threads

    /// From the main thread on a reload: the loop switches to `state` at its next wake-up, so a request is
    /// answered wholly by the old rules or wholly by the new.
    func install(_ state: ServingState) {
        http.post { [self] in
            for route in routes.all { route.install(state) }
            serving = state
            // Connections opened from now on read the headers the new config names.
            http.parserTemplate = Self.parser(for: state.gateway.config)
        }
    }

    /// From the main thread when the gateway stops.
    func requestStop() {
        http.requestStop()
    }

    // MARK: What every route asks

    /// The request's client (`clientAddress`), worked out once per request and only when needed (rate
    /// limit, GeoIP, access log). Kept on the listener, which answers one request at a time, rather than in
    /// a closure over the request: that closure and its cache were two allocations per request.
    func client(_ request: HTTPRequest) -> String {
        if let resolvedClient { return resolvedClient }
        let address = clientAddress(request)
        resolvedClient = address
        return address
    }

    /// The client: the peer, or, when the peer is a trusted proxy, the address its forwarding header names.
    func clientAddress(_ request: HTTPRequest) -> String {
        let direct = request.peer
        let proxies = serving.gateway.config.proxies
        guard !proxies.trusted.isEmpty, var list = request.text(request.head.extra0) else { return direct }
        if proxies.header == .forwarded { list = TrustedProxies.forwardedFor(fromForwarded: list) }
        return proxies.trusted.client(peer: direct, forwardedFor: list) ?? direct
    }

    /// The shopper's page language: their browser's choice among ours, else the link's country's, else
    /// English. Read only when a page is sent.
    func language(_ request: HTTPRequest, country: String?) -> Int {
        ShopperLanguage.choose(acceptLanguage: request.text(request.head.acceptLanguage), country: country)
    }

    /// A shopper's page in their language.
    func page(_ kind: PageKind, _ request: HTTPRequest, country: String?, extra: [ReplyHeader] = [], access: ReplyAccess) -> Reply {
        ShopperReplies.page(
            kind, language: language(request, country: country), catalog: serving.pages.catalog, extra: extra, access: access)
    }

    /// Whether the loop has closed its listener: new work is answered 503, nothing more is promised.
    var isStopping: Bool { http.isStopping }
}
