import CLibevent
import Foundation
import LinkOutCore
import Logging

/// The checkout's listener (`api.listen`): `POST /v1/line-items` with a bearer key, on its own thread and
/// event_base, apart from the shoppers' listener, which never reads a body. Requests are answered one at a
/// time, each after its lines are committed: a checkout sends one per purchase, not per page view.
final class APIServer: @unchecked Sendable {
    private let thread: EvhttpThread
    let boundPort: Int
    private let keys: APIKeys
    private let intake: LineItemIntake
    private let logger: Logger
    /// Told after lines are stored, so their report need not wait for the next poll.
    private let stored: @Sendable () -> Void

    init(settings: APISettings, keys: APIKeys, intake: LineItemIntake, logger: Logger, stored: @escaping @Sendable () -> Void) throws {
        self.keys = keys
        self.intake = intake
        self.logger = logger
        self.stored = stored
        thread = try EvhttpThread(name: "linkout-api", purpose: "API")
        let http = thread.http
        // evhttp answers a larger body with 413 before linkout sees it.
        evhttp_set_max_body_size(http, Int(settings.maxBodyBytes))
        evhttp_set_max_headers_size(http, 16_384)
        evhttp_set_allowed_methods(http, UInt16(EVHTTP_REQ_GET.rawValue | EVHTTP_REQ_POST.rawValue | EVHTTP_REQ_HEAD.rawValue))
        boundPort = try thread.bind(settings.listen, purpose: "api")
    }

    func start() {
        thread.start { [unowned self] request in handle(request) }
    }

    func stop() {
        thread.stop()
    }

    private func handle(_ request: OpaquePointer) {
        let uri = evhttp_request_get_uri(request).map { String(cString: $0) } ?? ""
        let path = uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? uri
        let command = evhttp_request_get_command(request)
        switch path {
        case "/healthz":
            reply(request, 200, "{\"status\":\"ok\"}")
        case "/v1/line-items":
            guard command == EVHTTP_REQ_POST else {
                evhttp_add_header(evhttp_request_get_output_headers(request), "Allow", "POST")
                reply(request, 405, LineItemIntake.errorBody([LineItemProblem(field: "", message: "use POST")]))
                return
            }
            lineItems(request)
        default:
            reply(request, 404, LineItemIntake.errorBody([LineItemProblem(field: "", message: "not found: this listener serves POST /v1/line-items")]))
        }
    }

    private func lineItems(_ request: OpaquePointer) {
        let headers = evhttp_request_get_input_headers(request)
        let authorization = evhttp_find_header(headers, "Authorization").map { String(cString: $0) } ?? ""
        guard authorization.hasPrefix("Bearer "), let keyName = keys.name(of: authorization.utf8.dropFirst("Bearer ".utf8.count)) else {
            logger.warning("api: refused a request without a valid key", metadata: ["path": "/v1/line-items"])
            evhttp_add_header(evhttp_request_get_output_headers(request), "WWW-Authenticate", "Bearer")
            reply(request, 401, LineItemIntake.errorBody([LineItemProblem(field: "Authorization", message: "a valid API key is required: Authorization: Bearer KEY")]))
            return
        }
        if let type = evhttp_find_header(headers, "Content-Type").map({ String(cString: $0) }),
           !type.lowercased().hasPrefix("application/json") {
            reply(request, 415, LineItemIntake.errorBody([LineItemProblem(field: "Content-Type", message: "must be application/json")]))
            return
        }
        let input = evhttp_request_get_input_buffer(request)
        let length = evbuffer_get_length(input)
        var body = [UInt8](repeating: 0, count: length)
        if length > 0 { _ = body.withUnsafeMutableBytes { evbuffer_copyout(input, $0.baseAddress, length) } }
        let answer = intake.submit(body, now: Reporter.now())
        var metadata = answer.logMetadata
        metadata["key"] = "\(keyName)"
        metadata["status"] = "\(answer.status)"
        if answer.status == 200 {
            logger.info("api: line items stored", metadata: metadata)
            if answer.changed { stored() }
        } else {
            logger.notice("api: line items refused", metadata: metadata)
        }
        reply(request, Int32(answer.status), answer.body)
    }

    private func reply(_ request: OpaquePointer, _ code: Int32, _ json: String) {
        let headers = evhttp_request_get_output_headers(request)
        evhttp_add_header(headers, "Content-Type", "application/json")
        evhttp_add_header(headers, "Cache-Control", "no-store")
        let buffer = evbuffer_new()
        var bytes = Array((json + "\n").utf8)
        bytes.withUnsafeMutableBytes { _ = evbuffer_add(buffer, $0.baseAddress, $0.count) }
        evhttp_send_reply(request, code, Self.reason(code), buffer)
        evbuffer_free(buffer)
    }

    static func reason(_ code: Int32) -> String {
        switch code {
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }
}
