import Foundation
import LinkOutCore
import Logging

/// The checkout's listener (`api.listen`): `POST /v1/line-items` and `POST /v1/tokens` with a bearer key,
/// on its own thread and event_base, apart from the shoppers' listener, which reads no body but Apple's.
/// Requests are answered one at a time, each after what it carries is committed: a checkout sends one per
/// purchase, an app's backend one per token it was handed, not per page view.
final class APIServer: HTTPResponder, @unchecked Sendable {
    private let thread: ListenerThread
    let boundPort: Int
    /// The keys of the config in force: a reload that removes one refuses it from the next request on.
    private let keys: @Sendable () -> APIKeys?
    private let intake: LineItemIntake
    private let registrations: TokenRegistrationIntake
    private let logger: Logger
    private let maxBodyBytes: Int
    /// Told after lines are stored, so their report need not wait for the next poll.
    private let stored: @Sendable () -> Void

    init(
        settings: APISettings, keys: @escaping @Sendable () -> APIKeys?, intake: LineItemIntake, registrations: TokenRegistrationIntake, logger: Logger,
        stored: @escaping @Sendable () -> Void
    ) throws {
        self.keys = keys
        self.intake = intake
        self.registrations = registrations
        self.logger = logger
        self.stored = stored
        maxBodyBytes = Int(settings.maxBodyBytes)
        thread = try ListenerThread(name: "linkout-api", purpose: "API", listen: settings.listen)
        boundPort = thread.boundPort
    }

    func start() {
        thread.start(responder: self)
    }

    func stop() {
        thread.stop()
    }

    func bodyLimit(for request: HTTPRequest) -> Int {
        request.method == .post && (request.path.elementsEqual("/v1/line-items".utf8) || request.path.elementsEqual("/v1/tokens".utf8))
            ? maxBodyBytes : 0
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

    func answered(_ reply: Reply, facts: ExchangeFacts, peer: @autoclosure () -> String) {}

    func respond(to request: HTTPRequest, exchange: Exchange, facts: inout ExchangeFacts) -> Reply? {
        switch request.pathText {
        case "/healthz":
            return Self.reply(200, "{\"status\":\"ok\"}")
        case "/v1/line-items", "/v1/tokens":
            guard request.method == .post else {
                return Self.reply(405, LineItemIntake.errorBody([LineItemProblem(field: "", message: "use POST")]), extra: [ReplyHeader("Allow", "POST")])
            }
            if let refusal = refusal(request) { return refusal }
            return request.pathText == "/v1/tokens" ? tokens(request) : lineItems(request)
        default:
            return Self.reply(404, LineItemIntake.errorBody([LineItemProblem(field: "", message: "not found: this listener serves POST /v1/line-items and POST /v1/tokens")]))
        }
    }

    /// The name of the request's key, when it carries a valid one.
    private func keyName(_ request: HTTPRequest) -> String? {
        let authorization = request.text(request.head.authorization) ?? ""
        guard authorization.hasPrefix("Bearer ") else { return nil }
        return keys()?.name(of: authorization.utf8.dropFirst("Bearer ".utf8.count))
    }

    /// The answer to a request without a valid key or of another type than JSON; nil when it may go on.
    private func refusal(_ request: HTTPRequest) -> Reply? {
        guard keyName(request) != nil else {
            logger.warning("api: refused a request without a valid key", metadata: ["path": "\(request.pathText)"])
            return Self.reply(401, LineItemIntake.errorBody([LineItemProblem(field: "Authorization", message: "a valid API key is required: Authorization: Bearer KEY")]),
                              extra: [ReplyHeader("WWW-Authenticate", "Bearer")])
        }
        if let type = request.text(request.head.contentType), !type.lowercased().hasPrefix("application/json") {
            return Self.reply(415, LineItemIntake.errorBody([LineItemProblem(field: "Content-Type", message: "must be application/json")]))
        }
        return nil
    }

    private func lineItems(_ request: HTTPRequest) -> Reply {
        let answer = intake.submit(Array(request.body), now: TimeSource.system.nowMs())
        var metadata = answer.logMetadata
        metadata["key"] = "\(keyName(request) ?? "")"
        metadata["status"] = "\(answer.status)"
        if answer.status == 200 {
            logger.info("api: line items stored", metadata: metadata)
            if answer.changed { stored() }
        } else {
            logger.notice("api: line items refused", metadata: metadata)
        }
        return Self.reply(answer.status, answer.body)
    }

    private func tokens(_ request: HTTPRequest) -> Reply {
        let answer = registrations.submit(Array(request.body), now: TimeSource.system.nowMs())
        var metadata: Logger.Metadata = [
            "key": "\(keyName(request) ?? "")", "status": "\(answer.status)", "recorded": "\(answer.recorded)",
            "unchanged": "\(answer.unchanged)", "refused": "\(answer.refused)",
        ]
        if !answer.problems.isEmpty { metadata["problems"] = "\(answer.problems.prefix(20).map(\.description).joined(separator: "; "))" }
        if answer.status == 200 {
            logger.info("api: tokens registered", metadata: metadata)
        } else {
            logger.notice("api: tokens registered, some refused", metadata: metadata)
        }
        return Self.reply(answer.status, answer.body)
    }

    private static func reply(_ status: Int, _ json: String, extra: [ReplyHeader] = []) -> Reply {
        ShopperReplies.json(status, json, extra: extra, access: ReplyAccess(route: "api"))
    }
}
