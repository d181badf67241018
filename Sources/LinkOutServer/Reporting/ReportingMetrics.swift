import CoreMetrics
import LinkOutCore
import LinkOutStore
import Logging
import Prometheus

/// The reporter's metrics: what Apple answered, and where the tokens stand.
final class ReportingMetrics: @unchecked Sendable {
    /// `linkout_reports_total{outcome}`: accepted, failed (Apple refused the content), retried (5xx, 429,
    /// no answer), unauthorized (401: the key or config is wrong).
    let accepted: CoreMetrics.Counter
    let failed: CoreMetrics.Counter
    let retried: CoreMetrics.Counter
    let unauthorized: CoreMetrics.Counter
    /// `linkout_tokens_unreported{age}`: tokens older than 7 and 10 days without an accepted report.
    let pastDay7: CoreMetrics.Recorder
    let pastDay10: CoreMetrics.Recorder
    /// `linkout_reporting_tokens{state}`: tokens by reporting state.
    let states: [String: CoreMetrics.Recorder]
    /// 1 while the reporter is paused by a 401.
    let paused: CoreMetrics.Recorder
    /// `linkout_reporting_enabled`: 1 when the config has a `reporting` section and the reporter runs; 0
    /// when nothing is sent to Apple, which an operator must hear of (the token gauges still count).
    let enabled: CoreMetrics.Recorder
    /// `linkout_reporting_requests_in_flight_limit`: how many requests to Apple the reporter may have in
    /// flight now (`SendConcurrency`, under `reporting.maxConcurrentRequests`).
    let inFlightLimit: CoreMetrics.Recorder
    /// `linkout_reporting_backlog_reports`, `linkout_reporting_send_rate` (reports answered for good a second,
    /// over 5 minutes) and `linkout_reporting_backlog_clear_seconds` (-1 while nothing is sent): `ReportBacklog`.
    let backlogReports: CoreMetrics.Recorder
    let sendRate: CoreMetrics.Recorder
    let backlogClearSeconds: CoreMetrics.Recorder
    private let factory: PrometheusMetricsFactory
    /// `linkout_month_close_outstanding{month}`: a month's tokens without an accepted report, per month
    /// with tokens (a bounded set: one a month), made as months appear (the refresh's thread only).
    private var outstanding: [UTCMonth: CoreMetrics.Recorder] = [:]

    static let stateNames = ["waiting", "due", "sending", "retrying", "reported", "failed"]

    init(factory: PrometheusMetricsFactory) {
        func outcome(_ name: String) -> CoreMetrics.Counter {
            CoreMetrics.Counter(label: "linkout_reports_total", dimensions: [("outcome", name)], factory: factory)
        }
        accepted = outcome("accepted")
        failed = outcome("failed")
        retried = outcome("retried")
        unauthorized = outcome("unauthorized")
        pastDay7 = CoreMetrics.Recorder(label: "linkout_tokens_unreported", dimensions: [("age", "7d")], aggregate: false, factory: factory)
        pastDay10 = CoreMetrics.Recorder(
            label: "linkout_tokens_unreported", dimensions: [("age", "10d")], aggregate: false, factory: factory)
        states = Dictionary(
            uniqueKeysWithValues: Self.stateNames.map { name in
                (
                    name,
                    CoreMetrics.Recorder(
                        label: "linkout_reporting_tokens", dimensions: [("state", name)], aggregate: false, factory: factory)
                )
            })
        paused = CoreMetrics.Recorder(label: "linkout_reporting_paused", dimensions: [], aggregate: false, factory: factory)
        enabled = CoreMetrics.Recorder(label: "linkout_reporting_enabled", dimensions: [], aggregate: false, factory: factory)
        inFlightLimit = CoreMetrics.Recorder(
            label: "linkout_reporting_requests_in_flight_limit", dimensions: [], aggregate: false, factory: factory)
        backlogReports = CoreMetrics.Recorder(
            label: "linkout_reporting_backlog_reports", dimensions: [], aggregate: false, factory: factory)
        sendRate = CoreMetrics.Recorder(label: "linkout_reporting_send_rate", dimensions: [], aggregate: false, factory: factory)
        backlogClearSeconds = CoreMetrics.Recorder(
            label: "linkout_reporting_backlog_clear_seconds", dimensions: [], aggregate: false, factory: factory)
        self.factory = factory
    }

    /// `linkout_reports_total{outcome}` for one send.
    func count(_ kind: Reporter.Round.Kind) {
        switch kind {
        case .accepted: accepted.increment()
        case .failed: failed.increment()
        case .retried: retried.increment()
        case .unauthorized: unauthorized.increment()
        }
    }

    func record(_ months: [MonthClose.State]) {
        for state in months {
            let recorder =
                outstanding[state.month]
                ?? CoreMetrics.Recorder(
                    label: "linkout_month_close_outstanding", dimensions: [("month", state.month.description)], aggregate: false,
                    factory: factory)
            outstanding[state.month] = recorder
            recorder.record(state.outstanding)
        }
    }

    func record(_ summary: ReportStatusSummary) {
        let rows = summary.rows
        pastDay7.record(rows.reduce(0) { $0 + $1.unreportedPastDay7 })
        pastDay10.record(rows.reduce(0) { $0 + $1.unreportedPastDay10 })
        states["waiting"]?.record(rows.reduce(0) { $0 + $1.waiting })
        states["due"]?.record(rows.reduce(0) { $0 + $1.due })
        states["sending"]?.record(rows.reduce(0) { $0 + $1.sending })
        states["retrying"]?.record(rows.reduce(0) { $0 + $1.retrying })
        states["reported"]?.record(rows.reduce(0) { $0 + $1.reported })
        states["failed"]?.record(rows.reduce(0) { $0 + $1.failed })
    }
}

/// Refreshes the token-state and month-close gauges from the store's counts, for the reporter and, when
/// reporting is off, for the watch that says so; and says in the log, once a day per month, a month whose
/// deadline is within `MonthClose.warningDays` (or past) with tokens not reported. The count reads every
/// token (seconds at ten million, bench/RESULTS.md): at most once a minute, and never more often than ten
/// times its own last cost, so it takes at most a tenth of its thread.
final class ReportingStatusGauges {
    private let store: any ReportStatusStore
    private let metrics: ReportingMetrics?
    private let noPurchaseAfterMs: Int64
    private let gatherMs: Int64
    private let closeDay: Int64
    private let logger: Logger?
    /// Its monotonic side times the count, for the spacing.
    private let clock: TimeSource
    private var lastAt: Int64?
    private var spacingMs: Int64 = 60_000
    /// The day (Unix days) each month at risk was last said, so it is said once a day.
    private var warnedOn: [UTCMonth: Int64] = [:]
    /// The day refused reports were last said: today at the start, since serve's start-up line says them.
    private var refusedWarnedOn: Int64?
    /// Whether to say refused reports at all: not with reporting off, where nothing is sent to retry.
    private let warnsOfRefusals: Bool

    init(
        store: any ReportStatusStore, metrics: ReportingMetrics?, noPurchaseAfterMs: Int64, gatherMs: Int64, closeDay: Int64,
        logger: Logger?,
        clock: TimeSource, warnsOfRefusals: Bool = true
    ) {
        self.store = store
        self.clock = clock
        refusedWarnedOn = clock.nowMs() / 86_400_000
        self.warnsOfRefusals = warnsOfRefusals
        self.metrics = metrics
        self.noPurchaseAfterMs = noPurchaseAfterMs
        self.gatherMs = gatherMs
        self.closeDay = closeDay
        self.logger = logger
    }

    /// When the backlog's day-10 warning was last logged: at most every 10 minutes.
    private var backlogWarnedAt: Int64?

    /// Counts and records when the spacing allows; the summary when it counted.
    @discardableResult
    func refresh(now: Int64) -> ReportStatusSummary? {
        if let lastAt, now - lastAt < spacingMs { return nil }
        lastAt = now
        let started = clock.monotonicMilliseconds()
        guard let summary = try? store.status(now: now, noPurchaseAfterMs: noPurchaseAfterMs, gatherMs: gatherMs) else { return nil }
        metrics?.record(summary)
        let backlog = summary.health.backlog
        metrics?.backlogReports.record(backlog.waiting)
        metrics?.sendRate.record(backlog.ratePerSecond)
        metrics?.backlogClearSeconds.record(backlog.clearMs.map { Double($0) / 1000 } ?? (backlog.waiting > 0 ? -1 : 0))
        if backlog.passesDay10(now: now), backlogWarnedAt.map({ now - $0 >= 600_000 }) ?? true {
            backlogWarnedAt = now
            logger?.warning("reporting: \(backlog.text(now: now)); raise reporting.maxConcurrentRequests if Apple answers promptly")
        }
        if let counts = try? store.monthCounts() {
            let months = MonthClose.states(counts, closeDay: closeDay, now: now)
            metrics?.record(months)
            warn(months, now: now)
        }
        if warnsOfRefusals, refusedWarnedOn != now / 86_400_000, let refused = try? store.refusedCount(), refused.count > 0 {
            refusedWarnedOn = now / 86_400_000
            logger?.warning("reporting: \(RefusedReportsText.line(refused))")
        }
        spacingMs = max(60_000, 10 * (clock.monotonicMilliseconds() - started))
        return summary
    }

    private func warn(_ months: [MonthClose.State], now: Int64) {
        let today = now / 86_400_000
        for month in months where month.atRisk && warnedOn[month.month] != today {
            warnedOn[month.month] = today
            let when = month.daysLeft > 0 ? "\(month.daysLeft) day(s) left" : "the deadline has passed"
            logger?.warning(
                "month close: \(month.month) has \(month.outstanding) token(s) without an accepted report; deadline \(UTCDate.format(milliseconds: month.deadline - 1)) (\(when)); linkout report status lists why reports wait",
                metadata: [
                    "month": "\(month.month)", "outstanding": "\(month.outstanding)", "tokens": "\(month.tokens)",
                ])
        }
    }
}
