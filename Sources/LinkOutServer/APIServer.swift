import CLibevent
import Foundation
import LinkOutCore
import Logging

/// The checkout's listener (`api.listen`): `POST /v1/line-items` with a bearer key, on its own thread and
/// event_base, apart from the shoppers' listener, which reads no body but Apple's. The loop checks the key
/// (in constant time, `APIKeys`) and the key's rate (`api.rateLimit`), then queues the request for the
/// store (`APIWorker`, at most `api.maxQueued`), and answers each once its lines are committed: a checkout
/// sends one per purchase, not per page view. What is refused is counted by status and logged at most once
/// a minute per reason and client.
final class APIServer: HTTPResponder, @unchecked Sendable {
    private let thread: ListenerThread
    let boundPort: Int
    private let keys: APIKeys
    private let logger: Logger
    private let maxBodyBytes: Int
    private let metrics: APIMetrics
    private let refusals: RefusalLog
    private var worker: APIWorker!
    /// Per key name; the loop's thread only. A few slots: there are a few keys.
    private var limiter: RateLimiter
    /// Answers the worker still owes; the loop's thread only.
    private var owed = 0
    var owesAnswers: Bool { owed > 0 }

    init(
        settings: APISettings, keys: APIKeys, intake: LineItemIntake, logger: Logger, metrics: APIMetrics,
        stored: @escaping @Sendable () -> Void
    ) throws {
        self.keys = keys
        self.logger = logger
        self.metrics = metrics
        refusals = RefusalLog(logger: logger, subject: "api")
        limiter = RateLimiter(policy: settings.rateLimit, slots: 256)
        maxBodyBytes = Int(settings.maxBodyBytes)
        // A backlog for a burst of checkouts at once; what the queue cannot take is answered 503 at once.
        thread = try ListenerThread(name: "linkout-api", purpose: "API", listen: settings.listen, backlog: 1024)
        boundPort = thread.boundPort
        let loop = thread.loop
        worker = APIWorker(intake: intake, maxQueued: settings.maxQueued) { [unowned self, logger] job, answer in
            var metadata = answer.logMetadata
            metadata["key"] = "\(job.keyName)"
            metadata["status"] = "\(answer.status)"
            if answer.status == 200 {
                logger.info("api: line items stored", metadata: metadata)
                if answer.changed { stored() }
            } else {
                logger.notice("api: line items refused", metadata: metadata)
            }
            loop.post { [self] in
                owed -= 1
                loop.answer(job.exchange, Self.reply(answer.status, answer.body, extra: answer.status == 503 ? [ReplyHeader("Retry-After", "1")] : []))
            }
        }
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
        request.method == .post && request.path.elementsEqual("/v1/line-items".utf8) ? maxBodyBytes : 0
    }

    func refused(_ refusal: RequestRefusal, request: HTTPRequest?, facts: inout ExchangeFacts) -> Reply {
        switch refusal {
        case .head(let problem):
            Self.reply(problem.status, LineItemIntake.errorBody([LineItemProblem(field: "", message: "malformed request: \(problem.rawValue)")]))
        case .body(let tooLarge):
            tooLarge
                ? Self.reply(413, LineItemIntake.errorBody([LineItemProblem(field: "", message: "the body is over api.maxBodyBytes (\(maxBodyBytes) bytes)")]))
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
        switch request.pathText {
        case "/healthz":
            return Self.reply(200, "{\"status\":\"ok\"}")
        case "/v1/line-items":
            guard request.method == .post else {
                return Self.reply(405, LineItemIntake.errorBody([LineItemProblem(field: "", message: "use POST")]), extra: [ReplyHeader("Allow", "POST")])
            }
            return lineItems(request, exchange: exchange)
        default:
            return Self.reply(404, LineItemIntake.errorBody([LineItemProblem(field: "", message: "not found: this listener serves POST /v1/line-items")]))
        }
    }

    /// The key, its rate and the content type here; the lines at the worker (nil: answered later).
    private func lineItems(_ request: HTTPRequest, exchange: Exchange) -> Reply? {
        let authorization = request.text(request.head.authorization) ?? ""
        guard authorization.hasPrefix("Bearer "), let keyName = keys.name(of: authorization.utf8.dropFirst("Bearer ".utf8.count)) else {
            refusals.note(reason: "unauthorized", client: request.peer, "refused a request without a valid key", metadata: ["path": "/v1/line-items"])
            return Self.reply(401, LineItemIntake.errorBody([LineItemProblem(field: "Authorization", message: "a valid API key is required: Authorization: Bearer KEY")]),
                              extra: [ReplyHeader("WWW-Authenticate", "Bearer")])
        }
        guard limiter.allow(client: keyName.utf8, nowMs: Int64(clibevent_monotonic_us() / 1000)) else {
            refusals.note(reason: "rate_limited", client: request.peer, "refused a request over api.rateLimit", metadata: ["key": "\(keyName)"])
            return Self.reply(429, LineItemIntake.errorBody([LineItemProblem(field: "", message: "too many requests for this key (api.rateLimit): send again after Retry-After")]),
                              extra: [ReplyHeader("Retry-After", "1")])
        }
        if let type = request.text(request.head.contentType), !type.lowercased().hasPrefix("application/json") {
            return Self.reply(415, LineItemIntake.errorBody([LineItemProblem(field: "Content-Type", message: "must be application/json")]))
        }
        guard !thread.loop.isStopping, worker.submit(APIWorker.Job(exchange: exchange, body: Array(request.body), keyName: keyName)) else {
            refusals.note(reason: "busy", client: request.peer, "answered 503: api.maxQueued requests wait for the store already", metadata: ["key": "\(keyName)"])
            return Self.reply(503, LineItemIntake.errorBody([LineItemProblem(field: "", message: "busy: nothing was stored; send the same request again after Retry-After")]),
                              extra: [ReplyHeader("Retry-After", "1")])
        }
        owed += 1
        return nil
    }

    private static func reply(_ status: Int, _ json: String, extra: [ReplyHeader] = []) -> Reply {
        ShopperReplies.json(status, json, extra: extra, access: ReplyAccess(route: "api"))
    }
}
