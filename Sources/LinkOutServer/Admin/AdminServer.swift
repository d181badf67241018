import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// What the admin listener reads of the running server, each when asked.
struct AdminSources {
    /// `/metrics` in Prometheus text format.
    var metricsText: @Sendable () -> [UInt8]
    var readiness: @Sendable () -> Readiness
    /// The config and keys in force.
    var serving: @Sendable () -> ServingState
}

/// The operators' listener, apart from the shoppers' (loopback by default): `/metrics` in Prometheus text
/// format, `/healthz` and `/readyz` again, and the operator dashboard (`/`, `/link/ID`, `/api/…`). On its
/// own thread and event_base, so a scrape or a chart never delays a shopper's request. With operator keys,
/// every path but `/healthz` and `/readyz` (load balancers) needs one.
final class AdminServer: HTTPResponder, @unchecked Sendable {
    private let sources: AdminSources
    private let thread: ListenerThread
    /// Admin thread only.
    private let dashboard: Dashboard?

    /// Every answer here: nothing is cached, the dashboard's pages load only what this listener serves (no
    /// CDN, no inline script, no frames).
    private static let common = [
        ReplyHeader("Cache-Control", "no-store"),
        ReplyHeader(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
        ReplyHeader("X-Content-Type-Options", "nosniff"),
        ReplyHeader("Referrer-Policy", "no-referrer"),
    ]

    /// Makes the listener's loop, not yet listening (`bind`): a test asks the responder without a socket.
    init(dashboard: DashboardSettings?, sources: AdminSources, clock: TimeSource) throws {
        self.sources = sources
        self.dashboard = dashboard.map { Dashboard(settings: $0, clock: clock) }
        thread = try ListenerThread(name: "linkout-admin", purpose: "admin", clock: clock)
    }

    /// Listens on `listen`; returns the port bound.
    func bind(_ listen: ListenAddress) throws -> Int {
        try thread.bind(listen)
    }

    func start() {
        thread.start(responder: self)
    }

    /// Stops the listener, once the shoppers' side has stopped.
    func stop() {
        thread.stop()
        dashboard?.stop()
    }

    func bodyLimit(for request: HTTPRequest) -> Int { 0 }

    func refused(_ refusal: RequestRefusal, request: HTTPRequest?, facts: inout ExchangeFacts) -> Reply {
        switch refusal {
        case .head(let problem): Self.text(problem.status, "malformed request: \(problem.rawValue)\n")
        case .body: Self.text(400, "the admin listener takes no request body\n")
        }
    }

    func answered(_ reply: Reply, facts: ExchangeFacts, peer: @autoclosure () -> String) {}

    func respond(to request: HTTPRequest, exchange: Exchange, facts: inout ExchangeFacts) -> Reply? {
        let path = request.pathText
        // Nothing here changes anything: GET and HEAD only, and a 405 that says so.
        guard request.method == .get || request.method == .head else {
            return Self.text(405, "the admin listener answers GET and HEAD only\n", extra: [ReplyHeader("Allow", "GET, HEAD")])
        }
        let serving = sources.serving()
        if let keys = serving.adminKeys, path != "/healthz", path != "/readyz" {
            guard Dashboard.authorized(request.text(request.head.authorization), keys: keys) else {
                return Self.text(
                    401,
                    "an operator key is required (server.adminKeysFile): Authorization: Bearer KEY, or basic auth with the key as password\n",
                    extra: [ReplyHeader("WWW-Authenticate", "Basic realm=\"linkout admin\", charset=\"UTF-8\"")])
            }
        }
        switch path {
        case "/metrics":
            return Self.reply(200, contentType: "text/plain; version=0.0.4; charset=utf-8", sources.metricsText())
        case "/healthz", "/readyz":
            // The same answers as on the shoppers' listener, with this listener's fields.
            var reply = path == "/healthz" ? Readiness.healthReply : sources.readiness().reply
            reply.headers += Self.common.filter { reply.header($0.name) == nil }
            return reply
        default:
            let query = Self.queryItems(request.targetText)
            let now = thread.loop.clock.nowMs()
            if let dashboard, let answer = dashboard.answer(path: path, query: query, config: serving.gateway.config, now: now) {
                return Self.reply(Int(answer.status), contentType: answer.contentType, answer.body)
            }
            return Self.text(
                404,
                "not found: the admin listener serves /metrics, /healthz, /readyz and the dashboard (/, /link/ID, /assets/chart.js, /api/overview, /api/experiments, /api/reporting, /api/reporter, /api/latest, /api/statement, /api/month-close, /api/payment-providers)\n"
            )
        }
    }

    private static func reply(_ status: Int, contentType: String, _ body: [UInt8], extra: [ReplyHeader] = []) -> Reply {
        Reply(
            status: status, headers: [ReplyHeader("Content-Type", contentType)] + common + extra, body: body,
            access: ReplyAccess(route: "admin"))
    }

    private static func text(_ status: Int, _ text: String, extra: [ReplyHeader] = []) -> Reply {
        reply(status, contentType: "text/plain; charset=utf-8", Array(text.utf8), extra: extra)
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

extension AdminServer: ServerPart {
    var partName: String { "the admin listener" }
}

extension AdminServer {
    /// The admin listener `serve` runs when the config names `server.adminListen`; nil without one. The
    /// dashboard reads the store on the admin thread's own connection, opened on its first request: a chart
    /// never waits on the writer's connection, and a store not yet there does not stop serve.
    static func forServe(setup: ServeSetup, sources: AdminSources) throws -> AdminServer? {
        let config = setup.config
        guard config.server.adminListen != nil else { return nil }
        if let missing = Dashboard.pagesProblem(setup.dashboardAssets) {
            setup.logger.warning(
                "the dashboard is OFF: its pages were not found (\(missing)); /metrics and the /api/ answers are served, / answers 404. Set publicDir to a folder holding admin/dashboard.html, such as the clone's Public (docs/dashboard.md)"
            )
        }
        let store = config.store, timeoutMs = config.storeOutage.timeoutMs
        let dashboard = DashboardSettings(
            assetsDirectory: setup.dashboardAssets,
            noPurchaseAfterMs: config.reporting?.noPurchaseAfterMs ?? ReportingSettings.defaultNoPurchaseAfterMs,
            gatherMs: config.reporting?.gatherMs ?? ReportingSettings.defaultGatherMs,
            reportingEnabled: config.reporting != nil
        ) { try openDashboardStore(store, timeoutMs: timeoutMs) }
        return try AdminServer(dashboard: dashboard, sources: sources, clock: setup.clock)
    }
}
