import Foundation
import LinkOutCore
import LinkOutStore

/// What the admin listener needs to serve the operator dashboard: its pages, Chart.js, the store to read
/// (on a connection of its own, opened on the admin thread when first asked). The operators' keys are
/// the serving state's, read again on reload.
package struct DashboardSettings: Sendable {
    /// `Public/admin`: the pages, script and style sheet. Nil serves the JSON API only.
    package var assetsDirectory: String?
    /// Chart.js, served as `/assets/chart.js` (Debian's `libjs-chart.js` by default).
    package var chartJSPath: String
    /// The no-purchase window of reporting (72 h by default), for the reporting states.
    package var noPurchaseAfterMs: Int64
    /// How long a token's changed line items gather before they are due (30 s by default).
    package var gatherMs: Int64
    /// Whether the config has a `reporting` section: without one nothing is sent to Apple, which the page
    /// says above everything else.
    package var reportingEnabled: Bool
    /// Opens the store for the dashboard's reads.
    package var openStore: @Sendable () throws -> DashboardStore

    package static let debianChartJS = "/usr/share/javascript/chart.js/chart.min.js"

    package init(
        assetsDirectory: String?, chartJSPath: String = DashboardSettings.debianChartJS,
        noPurchaseAfterMs: Int64 = ReportingSettings.defaultNoPurchaseAfterMs, gatherMs: Int64 = ReportingSettings.defaultGatherMs,
        reportingEnabled: Bool = true,
        openStore: @escaping @Sendable () throws -> DashboardStore
    ) {
        self.reportingEnabled = reportingEnabled
        self.assetsDirectory = assetsDirectory
        self.chartJSPath = chartJSPath
        self.noPurchaseAfterMs = noPurchaseAfterMs
        self.gatherMs = gatherMs
        self.openStore = openStore
    }
}

/// The dashboard's routes, as a function from a request's path and query to an answer: no libevent here,
/// so the admin server stays the only code that sees a request. Used on the admin thread only.
final class Dashboard {
    struct Answer {
        var status: Int32
        var contentType: String
        var body: [UInt8]
    }

    private let settings: DashboardSettings
    private var store: DashboardStore?
    /// Reporting's counts read every token: counted on their own thread, with their own store connection.
    private let reportingCounts: ReportingCounts

    /// The files of `Public/admin` the listener serves, by URL path; nothing else of the folder is reachable.
    static let pages: [String: (file: String, type: String)] = [
        // One page for the overview and every link's (`/link/ID`): its script reads which from the path.
        "/": ("dashboard.html", "text/html; charset=utf-8"),
        "/assets/dashboard.js": ("dashboard.js", "text/javascript; charset=utf-8"),
        "/assets/dashboard.css": ("dashboard.css", "text/css; charset=utf-8"),
    ]

    /// Why the dashboard's `file` (its page, by default) cannot be served from `directory`, or nil: the
    /// start-up warning's words and the 404's.
    static func pagesProblem(_ directory: String?, file: String = pages["/"]!.file) -> String? {
        guard let directory else { return "the config has no publicDir, and none are installed beside this binary" }
        let path = (directory as NSString).appendingPathComponent(file)
        return FileManager.default.isReadableFile(atPath: path) ? nil : "\(path) cannot be read"
    }

    /// - Parameter clock: the admin listener's, for the reporting counts.
    init(settings: DashboardSettings, clock: TimeSource) {
        self.settings = settings
        let counter = ReportingCounter(settings: settings, clock: clock)
        reportingCounts = ReportingCounts(clock: clock, saved: { try counter.saved() }, count: { try counter.count() })
    }

    /// Waits for a reporting count in progress.
    func stop() {
        reportingCounts.stop()
    }

    /// Whether `authorization` (the header's value) carries one of the keys: `Bearer KEY`, or basic auth
    /// with the key as the password (any user name), which a browser asks for by itself.
    static func authorized(_ authorization: String?, keys: APIKeys) -> Bool {
        guard let authorization else { return false }
        if authorization.hasPrefix("Bearer ") {
            return keys.name(of: authorization.utf8.dropFirst(7)) != nil
        }
        if authorization.hasPrefix("Basic "), let data = Data(base64Encoded: String(authorization.dropFirst(6))) {
            let text = Array(data)
            guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else { return false }
            return keys.name(of: text[(colon + 1)...]) != nil
        }
        return false
    }

    /// Nil when the path is not the dashboard's.
    func answer(path: String, query: [String: String], config: GatewayConfig, now: Int64) -> Answer? {
        let links = config.links
        // A link's page only for a link the API would answer for: a mistyped id gets a 404 that names the
        // links, not an empty page whose every request fails.
        if path.hasPrefix("/link/"), !Self.isKnownLink(String(path.dropFirst("/link/".count)), links) {
            let known = (links.map(\.id) + [Gateway.unroutedLink]).joined(separator: ", ")
            return Answer(
                status: 404, contentType: "text/plain; charset=utf-8", body: Array("no such link in the config; its links: \(known)\n".utf8)
            )
        }
        if let page = Self.pages[path] ?? (path.hasPrefix("/link/") ? Self.pages["/"] : nil) {
            guard let directory = settings.assetsDirectory,
                let data = FileManager.default.contents(atPath: (directory as NSString).appendingPathComponent(page.file))
            else {
                let looked = Self.pagesProblem(settings.assetsDirectory, file: page.file) ?? "\(page.file) cannot be read"
                return Answer(
                    status: 404, contentType: "text/plain; charset=utf-8",
                    body: Array(
                        "the dashboard's pages are not installed (\(looked)): set publicDir to a folder holding admin/\(page.file), such as the clone's Public\n"
                            .utf8))
            }
            return Answer(status: 200, contentType: page.type, body: Array(data))
        }
        if path == "/assets/chart.js" {
            guard let data = FileManager.default.contents(atPath: settings.chartJSPath) else {
                return Answer(
                    status: 404, contentType: "text/plain; charset=utf-8",
                    body: Array("Chart.js is not installed at \(settings.chartJSPath) (apt-get install libjs-chart.js)\n".utf8))
            }
            return Answer(status: 200, contentType: "text/javascript; charset=utf-8", body: Array(data))
        }
        guard path.hasPrefix("/api/") else { return nil }
        do {
            switch path {
            case "/api/overview": return json(try overview(query: query, links: links, now: now))
            case "/api/experiments": return json(try experiments(query: query, links: links, now: now))
            case "/api/reporting":
                switch reportingCounts.latest() {
                case .counted(let body): return Answer(status: 200, contentType: "application/json", body: body)
                case .pending: return json(["pending": true])
                case .failed(let error):
                    return Answer(
                        status: 503, contentType: "application/json", body: Self.encode(["error": "the store cannot be read: \(error)"]))
                }
            case "/api/latest": return json(try latest(query: query, links: links))
            case "/api/payment-providers":
                // The providers' webhook events by outcome, and the newest parked, waiting and held ones.
                let counts = try openedStore().reporting.providerEventCounts(limit: 20)
                let full = query["full"] == "1"
                return Answer(
                    status: 200, contentType: "application/json",
                    body: Array(counts.json(ids: { full ? $0 : Self.truncated($0) }).text.utf8))
            case "/api/reporter":
                let reporting = try openedStore().reporting
                let refused = try reporting.refusedCount()
                return json(
                    ReporterAnswer(
                        enabled: settings.reportingEnabled, health: try reporting.health(now: now, waitingLimit: 20),
                        refused: try reporting.failedReports(limit: 20), refusedCount: refused.count, refusedMonths: refused.months,
                        now: now))
            case "/api/statement":
                // The current month unless one is asked for; one app's, or every app's.
                let month =
                    try query["month"].map { text in
                        guard let month = UTCMonth(text) else { throw BadRequest(message: "month must be YYYY-MM, such as 2026-10") }
                        return month
                    } ?? UTCMonth(containing: now)
                if let app = query["app"], !config.apps.contains(where: { $0.bundleId == app }) {
                    throw BadRequest(
                        message: "app must be one of the config's apps (\(config.apps.map(\.bundleId).joined(separator: ", ")))")
                }
                let statement = try openedStore().reporting.statement(month, app: query["app"], config: config)
                return Answer(
                    status: 200, contentType: "application/json", body: Array(statement.json(lines: query["lines"] == "1").text.utf8))
            case "/api/month-close":
                let months = try openedStore().reporting.monthClose(config: config, now: now)
                return json(
                    months.map {
                        MonthCloseAnswer(
                            month: $0.month.description, tokens: $0.tokens, reported: $0.reported, outstanding: $0.outstanding,
                            deadline: $0.deadline,
                            daysLeft: $0.daysLeft, closed: $0.closed)
                    })
            default: return Answer(status: 404, contentType: "application/json", body: Array(#"{"error":"no such API"}"#.utf8))
            }
        } catch let error as BadRequest {
            return Answer(status: 400, contentType: "application/json", body: Self.encode(["error": error.message]))
        } catch {
            // Reopened on the next request: the file may have been replaced, PostgreSQL restarted.
            store = nil
            return Answer(status: 503, contentType: "application/json", body: Self.encode(["error": "the store cannot be read: \(error)"]))
        }
    }

    private struct BadRequest: Error {
        var message: String
    }

    private func openedStore() throws -> DashboardStore {
        if let store { return store }
        let opened = try settings.openStore()
        store = opened
        return opened
    }

    private func json(_ value: some Encodable) -> Answer {
        Answer(status: 200, contentType: "application/json", body: Self.encode(value))
    }

    static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    /// The range picker's presets, up to now.
    static let presets: [String: Int64] = ["hour": 3_600_000, "day": 86_400_000, "week": 7 * 86_400_000, "30d": 30 * 86_400_000]

    /// The preset a query that names no range gets. A new install's traffic is minutes old, and a day in
    /// 15-minute steps draws it as one sliver: while everything counted (visits and refusals) falls within
    /// the last hour's chart, or nothing is counted yet, the last hour; once anything is older, the last day.
    static func defaultPreset(firstCounted: Int64?, now: Int64) -> String {
        guard let firstCounted else { return "hour" }
        // The hour's chart starts on a 5-minute step, so it draws the bucket that step starts too.
        return firstCounted >= DashboardStore.Range(from: now - presets["hour"]!, to: now).from ? "hour" : "day"
    }

    /// A query's range, with the preset it is (nil for from and to).
    struct AskedRange {
        var range: DashboardStore.Range
        var preset: String?
    }

    /// `range` (a preset: hour, day, week, 30d), or `from` and `to` in Unix milliseconds (without `to`, up
    /// to now; without `from`, from a day before `to`), or none: `defaultPreset`. At most 400 days.
    private func range(_ query: [String: String], now: Int64) throws -> AskedRange {
        let named = query["range"].flatMap { $0.isEmpty ? nil : $0 }
        let bounded = query["from"] != nil || query["to"] != nil
        if named != nil, bounded { throw BadRequest(message: "give range, or from and to, not both") }
        if !bounded {
            let preset = try named ?? Self.defaultPreset(firstCounted: openedStore().firstCounted(), now: now)
            guard let span = Self.presets[preset] else {
                throw BadRequest(message: "range must be one of hour, day, week, 30d (or give from and to)")
            }
            return AskedRange(range: DashboardStore.Range(from: now - span, to: now), preset: preset)
        }
        let to = try query["to"].map { try number($0, "to") } ?? now
        let from = try query["from"].map { try number($0, "from") } ?? to - 86_400_000
        guard from < to else { throw BadRequest(message: "from must be before to") }
        guard to - from <= 400 * 86_400_000 else { throw BadRequest(message: "the range may span at most 400 days") }
        return AskedRange(range: DashboardStore.Range(from: from, to: to), preset: nil)
    }

    private func number(_ text: String, _ name: String) throws -> Int64 {
        guard let value = Int64(text), value >= 0 else { throw BadRequest(message: "\(name) must be Unix time in milliseconds") }
        return value
    }

    struct LinkInfo: Codable {
        var id: String
        var path: String
        var country: String
        var destinations: [String]
        var experiment: String?
    }

    struct OverviewAnswer: Codable {
        var links: [LinkInfo]
        var link: String?
        /// The preset answered, the default's too (absent for from and to): the page's picker shows it.
        var range: String?
        var data: DashboardStore.Overview
    }

    private func overview(query: [String: String], links: [Link], now: Int64) throws -> OverviewAnswer {
        let link = try knownLink(query, links)
        let asked = try range(query, now: now)
        let data = try openedStore().overview(asked.range, link: link)
        let infos = links.map { link in
            LinkInfo(
                id: link.id, path: link.path, country: link.country, destinations: link.destinations.map(\.url),
                experiment: link.experiment?.name)
        }
        return OverviewAnswer(links: infos, link: link, range: asked.preset, data: data)
    }

    struct ExperimentsAnswer: Codable {
        var from: Int64
        var to: Int64
        var link: String?
        /// As in `OverviewAnswer`.
        var range: String?
        var variants: [DashboardStore.VariantOutcome]
    }

    private func experiments(query: [String: String], links: [Link], now: Int64) throws -> ExperimentsAnswer {
        let link = try knownLink(query, links)
        let asked = try range(query, now: now)
        return ExperimentsAnswer(
            from: asked.range.from, to: asked.range.to, link: link, range: asked.preset,
            variants: try openedStore().experimentOutcomes(asked.range, link: link))
    }

    /// The `link` parameter: empty or absent is every link; otherwise a link of the config (or `unrouted`).
    private func knownLink(_ query: [String: String], _ links: [Link]) throws -> String? {
        let link = query["link"].flatMap { $0.isEmpty ? nil : $0 }
        if let link, !Self.isKnownLink(link, links) {
            throw BadRequest(message: "no link \(link) in the config")
        }
        return link
    }

    /// A link of the config, or `unrouted` (the tokens that arrived on no link's path).
    private static func isKnownLink(_ id: String, _ links: [Link]) -> Bool {
        id == Gateway.unroutedLink || links.contains { $0.id == id }
    }

    struct ReportingAnswer: Codable {
        struct Age: Codable {
            var day: Int64
            var tokens: Int64
        }
        var at: Int64
        /// Tokens by state, every app and environment together.
        var states: [String: Int64]
        var unreportedPastDay7: Int64
        var unreportedPastDay10: Int64
        /// Tokens without an accepted report now between day 3 and day 10 of their life: Apple reminds
        /// about each still unreported on day 10, so within the next week.
        var remindedWithinAWeek: Int64
        var ages: [Age]
        /// The outbox by state (`ReporterHealth`): toSend, sending, retrying, accepted, failed.
        var reports: [String: Int64]
        /// Production tokens whose report is due (past their window or gathering: every state but waiting),
        /// and those of them reported: the share a healthy gateway keeps at 100 %. Sandbox tokens apart.
        var due: Due

        struct Due: Codable {
            var tokens: Int64
            var reported: Int64
        }
    }

    /// The reporting answer over `store`: states, ages against the day-10 line, failed reports.
    static func reportingBody(_ store: DashboardStore, now: Int64, noPurchaseAfterMs: Int64, gatherMs: Int64) throws -> [UInt8] {
        let reporting = store.reporting
        try reporting.syncTokens()
        // After an upgrade to schema 7, where no reporter runs (reporting not configured), the older visits'
        // first shoppers are read here, a second per count, off the request.
        try reporting.backfillFirstShoppers(budget: 1)
        let summary = try reporting.status(now: now, noPurchaseAfterMs: noPurchaseAfterMs, gatherMs: gatherMs)
        var states = ["waiting": Int64(0), "due": 0, "sending": 0, "retrying": 0, "sent": 0, "failed": 0]
        var past7: Int64 = 0
        var past10: Int64 = 0
        for row in summary.rows {
            states["waiting", default: 0] += row.waiting
            states["due", default: 0] += row.due
            states["sending", default: 0] += row.sending
            states["retrying", default: 0] += row.retrying
            states["sent", default: 0] += row.reported
            states["failed", default: 0] += row.failed
            past7 += row.unreportedPastDay7
            past10 += row.unreportedPastDay10
        }
        let ages = try reporting.unreportedAges(now: now)
        let production = summary.rows.filter { $0.environment == TokenEnvironment.production.rawValue }
        let due = ReportingAnswer.Due(
            tokens: production.reduce(0) { $0 + $1.due + $1.sending + $1.retrying + $1.reported + $1.failed },
            reported: production.reduce(0) { $0 + $1.reported })
        let answer = ReportingAnswer(
            at: now, states: states, unreportedPastDay7: past7, unreportedPastDay10: past10,
            remindedWithinAWeek: ages.filter { (3..<10).contains($0.key) }.values.reduce(0, +),
            ages: (0...14).map { day in
                ReportingAnswer.Age(
                    day: Int64(day), tokens: day == 14 ? ages.filter { $0.key >= 14 }.values.reduce(0, +) : ages[Int64(day)] ?? 0)
            },
            reports: [
                "toSend": summary.health.toSend, "sending": summary.health.sending, "retrying": summary.health.retrying,
                "accepted": summary.health.accepted, "failed": summary.health.failed,
            ], due: due)
        return encode(answer)
    }

    /// `/api/month-close`: one entry per month with tokens, as `report status` lists them.
    struct MonthCloseAnswer: Encodable {
        var month: String
        var tokens, reported, outstanding, deadline, daysLeft: Int64
        var closed: Bool
    }

    /// `/api/reporter`: whether anything is sent, and the outbox as it is now (`ReporterHealth`), read on
    /// each ask: the open reports' index makes it cheap, unlike the tokens' count of `/api/reporting`.
    struct ReporterAnswer: Encodable {
        var enabled: Bool
        var health: ReporterHealth
        /// Reports Apple refused that still hold their tokens: read here, on each ask, so the page never shows
        /// an older count's list.
        var refused: [FailedReport]
        /// All of them (`refused` lists the newest 20), and the months (UTC) their production tokens hold open.
        var refusedCount: Int64
        var refusedMonths: [UTCMonth]
        /// When the answer was made: whether the backlog passes day 10 is said against it.
        var now: Int64 = 0

        struct Refused: Encodable {
            var requestIdentifier, externalPurchaseId, bundleId, status, answer, month, environment: String
            var finishedAt, refusals: Int64
            var retryAt: Int64?
        }

        struct LastError: Encodable {
            var answer: String
            var at: Int64
            var externalPurchaseId: String
        }

        struct Waiting: Encodable {
            var requestIdentifier, externalPurchaseId, bundleId, status, lastAnswer: String
            var attempts, failures, nextAttemptAt: Int64
            var lastStatus, lastAttemptAt: Int64?
        }

        enum Keys: String, CodingKey {
            case enabled, pausedUntil, nextTryAt, lastError, toSend, sending, retrying, accepted, failed, waiting, refused, refusedCount,
                refusedMonths
            case backlog
        }

        struct Backlog: Encodable {
            var waiting: Int64
            var perSecond: Double
            var clearMs, day10At: Int64?
            var passesDay10: Bool
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(enabled, forKey: .enabled)
            try container.encode(health.pausedUntil, forKey: .pausedUntil)
            try container.encode(health.nextTryAt, forKey: .nextTryAt)
            try container.encode(
                health.lastError.map { LastError(answer: $0.answer, at: $0.at, externalPurchaseId: truncated($0.externalPurchaseId)) },
                forKey: .lastError)
            try container.encode(health.toSend, forKey: .toSend)
            try container.encode(health.sending, forKey: .sending)
            try container.encode(health.retrying, forKey: .retrying)
            try container.encode(health.accepted, forKey: .accepted)
            try container.encode(health.failed, forKey: .failed)
            let backlog = health.backlog
            try container.encode(
                Backlog(
                    waiting: backlog.waiting, perSecond: backlog.ratePerSecond, clearMs: backlog.clearMs, day10At: backlog.day10At,
                    passesDay10: backlog.passesDay10(now: now)), forKey: .backlog)
            try container.encode(
                health.waiting.map {
                    Waiting(
                        requestIdentifier: truncated($0.requestIdentifier), externalPurchaseId: truncated($0.externalPurchaseId),
                        bundleId: $0.bundleId,
                        status: $0.status, lastAnswer: $0.lastAnswer, attempts: $0.attempts, failures: $0.failures,
                        nextAttemptAt: $0.nextAttemptAt,
                        lastStatus: $0.lastStatus, lastAttemptAt: $0.lastAttemptAt)
                }, forKey: .waiting)
            try container.encode(
                refused.map {
                    Refused(
                        requestIdentifier: truncated($0.requestIdentifier), externalPurchaseId: truncated($0.externalPurchaseId),
                        bundleId: $0.bundleId,
                        status: $0.status, answer: $0.answer, month: $0.month.description, environment: $0.environment.rawValue,
                        finishedAt: $0.finishedAt, refusals: $0.refusals, retryAt: $0.retryAt)
                }, forKey: .refused)
            try container.encode(refusedCount, forKey: .refusedCount)
            try container.encode(refusedMonths.map(\.description), forKey: .refusedMonths)
        }
    }

    /// Ids are shown as their first 8 characters unless the operator asks for them whole (`full=1`), after
    /// a sandbox id's `SANDBOX_`, which is itself 8 characters: cut there, every sandbox id looked the same.
    static func truncated(_ id: String) -> String {
        let sandbox = id.hasPrefix("SANDBOX_") ? "SANDBOX_" : ""
        let rest = id.dropFirst(sandbox.count)
        return rest.count > 8 ? sandbox + rest.prefix(8) + "…" : id
    }

    struct LatestAnswer: Codable {
        var visits: [DashboardStore.LatestVisit]
        var refusals: [DashboardStore.LatestRefusal]
    }

    private func latest(query: [String: String], links: [Link]) throws -> LatestAnswer {
        let link = try knownLink(query, links)
        var limit = 50
        if let text = query["limit"] {
            guard let value = Int(text), (1...200).contains(value) else { throw BadRequest(message: "limit must be from 1 to 200") }
            limit = value
        }
        var found = try openedStore().latest(link: link, limit: limit)
        if query["full"] != "1" {
            for index in found.visits.indices { found.visits[index].id = Self.truncated(found.visits[index].id) }
        }
        return LatestAnswer(visits: found.visits, refusals: found.refusals)
    }
}

/// Makes the reporting counts on their thread, with a store connection of its own (the admin thread's is
/// the admin thread's), opened at the first count and again after a failed one.
private final class ReportingCounter: @unchecked Sendable {
    private let settings: DashboardSettings
    private var store: DashboardStore?
    /// The count's time, and on the monotonic side how long it took.
    private let clock: TimeSource

    init(settings: DashboardSettings, clock: TimeSource) {
        self.settings = settings
        self.clock = clock
    }

    /// The name of reporting's count in `dashboard_counts`, with the version of its JSON: a build that
    /// changes the answer's shape names it anew, and never serves a kept count of the old shape.
    static let name = "reporting/3"

    func count() throws -> [UInt8] {
        try withStore { opened in
            let now = clock.nowMs(), started = clock.monotonicMilliseconds()
            let body = try Dashboard.reportingBody(
                opened, now: now, noPurchaseAfterMs: settings.noPurchaseAfterMs, gatherMs: settings.gatherMs)
            // Kept for the next start and the other instances. A count that cannot be kept (the store
            // refusing a write) is still answered here.
            try? opened.saveCount(
                Self.name,
                DashboardStore.SavedCount(
                    countedAt: now, tookMs: clock.monotonicMilliseconds() - started, body: String(decoding: body, as: UTF8.self)))
            return body
        }
    }

    func saved() throws -> (body: [UInt8], countedAt: Int64, tookMs: Int64)? {
        try withStore { opened in
            try opened.savedCount(Self.name).map { (Array($0.body.utf8), $0.countedAt, $0.tookMs) }
        }
    }

    /// Runs `body` on the counter's store, opened if needed; a failure closes it, to be opened again next.
    private func withStore<Result>(_ body: (DashboardStore) throws -> Result) throws -> Result {
        do {
            let opened = try store ?? settings.openStore()
            store = opened
            return try body(opened)
        } catch {
            store = nil
            throw error
        }
    }
}
