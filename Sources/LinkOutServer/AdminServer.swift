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
    private var base: OpaquePointer { thread.base }
    private var http: OpaquePointer { thread.http }
    let boundPort: Int
    /// The listening socket, closed first on stop.
    private var boundSocket: OpaquePointer?
    private var listener: OpaquePointer?
    /// Admin thread only.
    private let dashboard: Dashboard?
    private let keys: APIKeys?

    init(server: LinkOutServer, listen: ListenAddress, dashboard: DashboardSettings?) throws {
        self.server = server
        self.dashboard = dashboard.map(Dashboard.init(settings:))
        self.keys = dashboard?.keys
        thread = try EvhttpThread(name: "linkout-admin", purpose: "admin")
        let base = thread.base, http = thread.http
        evhttp_set_max_body_size(http, 0)
        // Bound as the main listener is, with SO_REUSEPORT: a new process can start on the same admin port
        // before the old one stops (the restart with no gap), which evhttp_bind_socket does not allow.
        guard let (address, length) = EventLoop.socketAddress(listen) else {
            throw ServerError("cannot parse admin listen address \(listen): the host must be a numeric IPv4 or IPv6 address")
        }
        var storage = address
        let listener = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                evconnlistener_new_bind(base, nil, nil, clibevent_listener_flags(), 128, $0, length)
            }
        }
        guard let listener, let bound = evhttp_bind_listener(http, listener) else {
            throw ServerError("cannot listen on \(listen) (admin): \(String(cString: strerror(errno)))")
        }
        boundSocket = bound
        self.listener = listener
        clibevent_unsteer_reuseport(clibevent_listener_fd(listener))
        boundPort = EventLoop.localPort(of: listener)
    }

    func start() {
        thread.start(handler: { [unowned self] request in handle(request) }, onStop: { [unowned self] in closeAndExit() })
    }

    /// On the admin thread: steers new connections away, closes the listening socket after a moment (so
    /// the kernel sends new connections to another process sharing the port, a restart with no gap), then
    /// leaves a moment for the requests already accepted to be answered before the loop exits.
    private func closeAndExit() {
        // As the loops do: new connections go to a newer process's admin listener (index 1 of the group:
        // this process's is the only older one), and what the kernel queued here is accepted for a moment.
        if let listener { _ = clibevent_steer_reuseport(clibevent_listener_fd(listener), 1) }
        var pause = timeval(tv_sec: 0, tv_usec: 50_000)
        event_base_once(base, -1, Int16(EV_TIMEOUT), { _, _, argument in
            guard let argument else { return }
            let admin = Unmanaged<AdminServer>.fromOpaque(argument).takeUnretainedValue()
            if let boundSocket = admin.boundSocket { evhttp_del_accept_socket(admin.http, boundSocket) }
            admin.boundSocket = nil
            admin.listener = nil
            var pause = timeval(tv_sec: 0, tv_usec: 100_000)
            event_base_loopexit(admin.base, &pause)
        }, Unmanaged.passUnretained(self).toOpaque(), &pause)
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
