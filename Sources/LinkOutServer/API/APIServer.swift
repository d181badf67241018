import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// The checkout's listener (`api.listen`): `POST /v1/line-items` and `POST /v1/tokens` with a bearer key,
/// on its own thread and event_base, apart from the shoppers' listener, which reads no body but Apple's.
/// The loop checks the key (in constant time, `APIKeys`), the key's rate (`api.rateLimit`) and the content
/// type, then queues the request for the store (`APIWorker`, at most `api.maxQueued`), and answers each
/// once what it carries is committed: a checkout sends one per purchase, an app's backend one per token it
/// was handed, not per page view. What is refused is counted by status and logged at most once a minute per
/// reason and client.
final class APIServer: HTTPResponder, @unchecked Sendable {
    private let thread: ListenerThread
    private let listen: ListenAddress
    /// The keys of the config in force: a reload that removes one refuses it from the next request on.
    private let keys: @Sendable () -> APIKeys?
    private let logger: Logger
    private let maxBodyBytes: Int
    private let metrics: APIMetrics
    private let refusals: RefusalLog
    private var worker: APIWorker!
    /// Per key name; the loop's thread only. A few slots: there are a few keys.
    private var limiter: RateLimiter

    init(
        settings: APISettings, keys: @escaping @Sendable () -> APIKeys?, intake: LineItemIntake,
        registrations: TokenRegistrationIntake, logger: Logger, metrics: APIMetrics, clock: TimeSource,
        stored: @escaping @Sendable () -> Void
    ) throws {
        self.keys = keys
        self.logger = logger
        self.metrics = metrics
        refusals = RefusalLog(logger: logger, subject: "api", clock: clock)
        limiter = RateLimiter(policy: settings.rateLimit, slots: 256)
        maxBodyBytes = Int(settings.maxBodyBytes)
        listen = settings.listen
        thread = try ListenerThread(name: "linkout-api", purpose: "API", clock: clock)
        let loop = thread.loop
        worker = APIWorker(lineItems: intake, registrations: registrations, maxQueued: settings.maxQueued, clock: clock) {
            [logger] job, answer in
            Self.log(answer, key: job.keyName, logger: logger)
            if case .lineItems(let lines) = answer, lines.status == 200, lines.changed { stored() }
            loop.deliver([
                ParkedReply(
                    exchange: job.exchange,
                    reply: Self.reply(answer.status, answer.body, extra: answer.status == 503 ? [ReplyHeader("Retry-After", "1")] : []))
            ])
        }
    }

    /// Listens on `api.listen`; returns the port bound. Apart from `init`, so a test asks the responder
    /// without a socket.
    func bind() throws -> Int {
        // A backlog for a burst of checkouts at once; what the queue cannot take is answered 503 at once.
        try thread.bind(listen, backlog: 1024)
    }

    func start() {
        worker.start()
        thread.start(responder: self)
    }

    /// The listener first (it waits for the answers the worker owes), then the worker.
    func stop() {
        thread.stop()
        worker.stop()
    }

    func bodyLimit(for request: HTTPRequest) -> Int {
        request.method == .post && Self.route(request) != nil ? maxBodyBytes : 0
    }

    func refused(_ refusal: RequestRefusal, request: HTTPRequest?, facts: inout ExchangeFacts) -> Reply {
        switch refusal {
        case .head(let problem):
            Self.reply(
                problem.status, LineItemIntake.errorBody([LineItemProblem(field: "", message: "malformed request: \(problem.rawValue)")]))
        case .body(let tooLarge):
            tooLarge
                ? Self.reply(
                    413,
                    LineItemIntake.errorBody([
                        LineItemProblem(field: "", message: "the body is over api.maxBodyBytes (\(maxBodyBytes) bytes)")
                    ]))
                : Self.reply(400, LineItemIntake.errorBody([LineItemProblem(field: "", message: "this request takes no body")]))
        }
    }

    /// The one exit: every answer counted by status.
    func answered(_ reply: Reply, facts: ExchangeFacts, peer: @autoclosure () -> String) {
        metrics.answered(status: reply.status)
    }

    func expired(_ expiry: ConnectionLife.Expiry, request: HTTPRequest?) {
        guard expiry == .slowBody, let request else { return }
        refusals.note(reason: "slow_body", client: request.peer, "closed a connection whose body did not arrive within 30 s of its head")
    }

    func respond(to request: HTTPRequest, exchange: Exchange, facts: inout ExchangeFacts) -> Reply? {
        if request.pathText == "/healthz" {
            return Self.reply(200, "{\"status\":\"ok\"}")
        }
        guard let route = Self.route(request) else {
            return Self.reply(
                404,
                LineItemIntake.errorBody([
                    LineItemProblem(field: "", message: "not found: this listener serves POST /v1/line-items and POST /v1/tokens")
                ]))
        }
        guard request.method == .post else {
            return Self.reply(
                405, LineItemIntake.errorBody([LineItemProblem(field: "", message: "use POST")]), extra: [ReplyHeader("Allow", "POST")])
        }
        return queue(request, route: route, exchange: exchange)
    }

    private static func route(_ request: HTTPRequest) -> APIWorker.Route? {
        if request.path.elementsEqual("/v1/line-items".utf8) { return .lineItems }
        if request.path.elementsEqual("/v1/tokens".utf8) { return .tokens }
        return nil
    }

    /// The key, its rate and the content type here; the body at the worker (nil: answered later).
    private func queue(_ request: HTTPRequest, route: APIWorker.Route, exchange: Exchange) -> Reply? {
        let authorization = request.text(request.head.authorization) ?? ""
        guard authorization.hasPrefix("Bearer "), let keyName = keys()?.name(of: authorization.utf8.dropFirst("Bearer ".utf8.count)) else {
            refusals.note(
                reason: "unauthorized", client: request.peer, "refused a request without a valid key",
                metadata: ["path": "\(request.pathText)"])
            return Self.reply(
                401,
                LineItemIntake.errorBody([
                    LineItemProblem(field: "Authorization", message: "a valid API key is required: Authorization: Bearer KEY")
                ]),
                extra: [ReplyHeader("WWW-Authenticate", "Bearer")])
        }
        guard limiter.allow(client: keyName.utf8, atMs: thread.loop.clock.monotonicMilliseconds()) else {
            refusals.note(
                reason: "rate_limited", client: request.peer, "refused a request over api.rateLimit", metadata: ["key": "\(keyName)"])
            return Self.reply(
                429,
                LineItemIntake.errorBody([
                    LineItemProblem(field: "", message: "too many requests for this key (api.rateLimit): send again after Retry-After")
                ]),
                extra: [ReplyHeader("Retry-After", "1")])
        }
        if let type = request.text(request.head.contentType), !type.lowercased().hasPrefix("application/json") {
            return Self.reply(415, LineItemIntake.errorBody([LineItemProblem(field: "Content-Type", message: "must be application/json")]))
        }
        let job = APIWorker.Job(route: route, exchange: exchange, body: Array(request.body), keyName: keyName)
        guard !thread.loop.isStopping, worker.submit(job) else {
            refusals.note(
                reason: "busy", client: request.peer, "answered 503: api.maxQueued requests wait for the store already",
                metadata: ["key": "\(keyName)"])
            return Self.reply(
                503,
                LineItemIntake.errorBody([
                    LineItemProblem(field: "", message: "busy: nothing was stored; send the same request again after Retry-After")
                ]),
                extra: [ReplyHeader("Retry-After", "1")])
        }
        return nil
    }

    /// A line per request the worker answered: what was stored or refused, and under which key.
    private static func log(_ answer: APIWorker.Answer, key: String, logger: Logger) {
        switch answer {
        case .lineItems(let answer):
            var metadata = answer.logMetadata
            metadata["key"] = "\(key)"
            metadata["status"] = "\(answer.status)"
            if answer.status == 200 {
                logger.info("api: line items stored", metadata: metadata)
            } else {
                logger.notice("api: line items refused", metadata: metadata)
            }
        case .tokens(let answer):
            var metadata: Logger.Metadata = [
                "key": "\(key)", "status": "\(answer.status)", "recorded": "\(answer.recorded)",
                "unchanged": "\(answer.unchanged)", "refused": "\(answer.refused)",
            ]
            if !answer.problems.isEmpty {
                metadata["problems"] = "\(answer.problems.prefix(20).map(\.description).joined(separator: "; "))"
            }
            if answer.status == 200 {
                logger.info("api: tokens registered", metadata: metadata)
            } else {
                logger.notice("api: tokens registered, some refused", metadata: metadata)
            }
        }
    }

    private static func reply(_ status: Int, _ json: String, extra: [ReplyHeader] = []) -> Reply {
        ShopperReplies.json(status, json, extra: extra, access: ReplyAccess(route: "api"))
    }
}

extension APIServer: ServerPart {
    var partName: String { "the API listener" }
}

extension APIServer {
    /// The API listener `serve` runs when the config has an `api` section, with its intakes on a store
    /// connection of their own; nil without one.
    static func forServe(
        setup: ServeSetup, serving: Locked<ServingState>, metrics: GatewayMetrics, connection: (String) throws -> any ReportingStore,
        record: @escaping ([TokenRecord]) throws -> Void, wakeReporter: @escaping @Sendable () -> Void
    ) throws -> APIServer? {
        guard let settings = setup.config.api else { return nil }
        let store = try connection("the API")
        return try APIServer(
            settings: settings, keys: { serving.withLock { $0.apiKeys } },
            intake: LineItemIntake(store: store, signing: { serving.withLock { $0.gateway.signer } }),
            registrations: TokenRegistrationIntake(store: store, config: { serving.withLock { $0.gateway.config } }, record: record),
            logger: setup.logger, metrics: metrics.api, clock: setup.clock, stored: wakeReporter)
    }
}
