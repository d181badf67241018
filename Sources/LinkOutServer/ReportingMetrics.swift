import CoreMetrics
import LinkOutStore
import Prometheus

/// The reporter's metrics: what Apple answered, and where the tokens stand.
final class ReportingMetrics: Sendable {
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

    static let stateNames = ["waiting", "due", "sending", "reported", "failed"]

    init(factory: PrometheusMetricsFactory) {
        func outcome(_ name: String) -> CoreMetrics.Counter {
            CoreMetrics.Counter(label: "linkout_reports_total", dimensions: [("outcome", name)], factory: factory)
        }
        accepted = outcome("accepted")
        failed = outcome("failed")
        retried = outcome("retried")
        unauthorized = outcome("unauthorized")
        pastDay7 = CoreMetrics.Recorder(label: "linkout_tokens_unreported", dimensions: [("age", "7d")], aggregate: false, factory: factory)
        pastDay10 = CoreMetrics.Recorder(label: "linkout_tokens_unreported", dimensions: [("age", "10d")], aggregate: false, factory: factory)
        states = Dictionary(uniqueKeysWithValues: Self.stateNames.map { name in
            (name, CoreMetrics.Recorder(label: "linkout_reporting_tokens", dimensions: [("state", name)], aggregate: false, factory: factory))
        })
        paused = CoreMetrics.Recorder(label: "linkout_reporting_paused", dimensions: [], aggregate: false, factory: factory)
    }

    func record(_ summary: ReportStatusSummary) {
        let rows = summary.rows
        pastDay7.record(rows.reduce(0) { $0 + $1.unreportedPastDay7 })
        pastDay10.record(rows.reduce(0) { $0 + $1.unreportedPastDay10 })
        states["waiting"]?.record(rows.reduce(0) { $0 + $1.waiting })
        states["due"]?.record(rows.reduce(0) { $0 + $1.due })
        states["sending"]?.record(rows.reduce(0) { $0 + $1.sending })
        states["reported"]?.record(rows.reduce(0) { $0 + $1.reported })
        states["failed"]?.record(rows.reduce(0) { $0 + $1.failed })
    }
}
