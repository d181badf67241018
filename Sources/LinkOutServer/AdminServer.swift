import CLibevent
import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// The operators' listener, apart from the shoppers' (loopback by default): `/metrics` in Prometheus text
/// format, `/healthz` and `/readyz` again, and the operator dashboard (`/`, `/link/ID`, `/api/…`). On its
/// own thread and event_base, so a scrape or a chart never delays a shopper's request. With operator keys,
/// every path but `/healthz` and `/readyz` (load balancers) needs one.
final class AdminServer: @unchecked Sendable {
    private unowned let server: LinkOutServer
    private let thread: EvhttpThread
    let boundPort: Int
    /// Admin thread only.
    private let dashboard: Dashboard?
    private let keys: APIKeys?

    init(server: LinkOutServer, listen: ListenAddress, dashboard: DashboardSettings?) throws {
        self.server = server
        self.dashboard = dashboard.map(Dashboard.init(settings:))
        self.keys = dashboard?.keys
        thread = try EvhttpThread(name: "linkout-admin", purpose: "admin")
        evhttp_set_max_body_size(thread.http, 0)
        boundPort = try thread.bind(listen, purpose: "admin")
    }

    func start() {
        thread.start { [unowned self] request in handle(request) }
    }

    /// Stops the listener, once the shoppers' side has stopped.
    func stop() {
        thread.stop()
    }

    private func handle(_ request: OpaquePointer) {
        let uri = evhttp_request_get_uri(request).map { String(cString: $0) } ?? ""
        let path = uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? uri
        let headers = evhttp_request_get_output_headers(request)
        evhttp_add_header(headers, "Cache-Control", "no-store")
        // The dashboard's pages load only what this listener serves: no CDN, no inline script, no frames.
        evhttp_add_header(headers, "Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
        evhttp_add_header(headers, "X-Content-Type-Options", "nosniff")
        evhttp_add_header(headers, "Referrer-Policy", "no-referrer")
        var body: [UInt8]
        var code: Int32
        // Nothing here changes anything: GET and HEAD only, and a 405 that says so (evhttp's own refusal of
        // a method is a 501, which reads as linkout's fault).
        let method = evhttp_request_get_command(request)
        guard method == EVHTTP_REQ_GET || method == EVHTTP_REQ_HEAD else {
            evhttp_add_header(headers, "Content-Type", "text/plain; charset=utf-8")
            evhttp_add_header(headers, "Allow", "GET, HEAD")
            send(request, 405, "Method Not Allowed", Array("the admin listener answers GET and HEAD only\n".utf8))
            return
        }
        if let keys, path != "/healthz", path != "/readyz" {
            let authorization = evhttp_find_header(evhttp_request_get_input_headers(request), "Authorization").map { String(cString: $0) }
            guard Dashboard.authorized(authorization, keys: keys) else {
                evhttp_add_header(headers, "Content-Type", "text/plain; charset=utf-8")
                evhttp_add_header(headers, "WWW-Authenticate", "Basic realm=\"linkout admin\", charset=\"UTF-8\"")
                send(request, 401, "Unauthorized", Array("an operator key is required (server.adminKeysFile): Authorization: Bearer KEY, or basic auth with the key as password\n".utf8))
                return
            }
        }
        switch path {
        case "/metrics":
            evhttp_add_header(headers, "Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            body = server.metrics.render(queueDepth: server.writer.currentStatus.pending, outage: server.outageReporter?.outageStatus)
            code = 200
        case "/healthz":
            evhttp_add_header(headers, "Content-Type", "text/plain; charset=utf-8")
            body = Array("ok\n".utf8)
            code = 200
        case "/readyz":
            evhttp_add_header(headers, "Content-Type", "text/plain; charset=utf-8")
            let readiness = server.readiness()
            if readiness.degraded { evhttp_add_header(headers, "X-Linkout-Degraded", "spool") }
            body = Array((readiness.why + "\n").utf8)
            code = readiness.status
        default:
            let query = Self.queryItems(uri)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            if let dashboard, let answer = dashboard.answer(path: path, query: query, links: server.serving.gateway.config.links, now: now) {
                evhttp_add_header(headers, "Content-Type", answer.contentType)
                body = answer.body
                code = answer.status
            } else {
                evhttp_add_header(headers, "Content-Type", "text/plain; charset=utf-8")
                body = Array("not found: the admin listener serves /metrics, /healthz, /readyz and the dashboard (/, /link/ID, /api/overview, /api/experiments, /api/reporting, /api/latest)\n".utf8)
                code = 404
            }
        }
        let phrases: [Int32: String] = [200: "OK", 400: "Bad Request", 401: "Unauthorized", 503: "Service Unavailable"]
        send(request, code, phrases[code] ?? "Not Found", body)
    }

    private func send(_ request: OpaquePointer, _ code: Int32, _ phrase: String, _ body: [UInt8]) {
        let buffer = evbuffer_new()
        body.withUnsafeBytes { _ = evbuffer_add(buffer, $0.baseAddress, $0.count) }
        evhttp_send_reply(request, code, phrase, buffer)
        evbuffer_free(buffer)
    }

    /// The query's `name=value` pairs, percent-decoded (`+` as a space); the last of a repeated name wins.
    static func queryItems(_ uri: String) -> [String: String] {
        guard let mark = uri.firstIndex(of: "?") else { return [:] }
        var items: [String: String] = [:]
        for pair in uri[uri.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            items[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return items
    }
}
