import CoreMetrics
import LinkOutCore
import Prometheus

/// Apple's notifications: what linkout did with each, why it refused the others, and the tokens Apple
/// reminded of before linkout reported them.
final class NotificationMetrics: Sendable {
    /// `linkout_notifications_total{outcome}`: report_due, already_reported, report_blocked, unrecognized,
    /// token_recorded, stored, duplicate.
    let outcomes: [NotificationOutcome: CoreMetrics.Counter]
    /// `linkout_notifications_refused_total{reason}`: one series per `NotificationRefusal.Reason` (a body
    /// over `maxBodyBytes` is the connection layer's 413, never read, and is not counted here).
    let refusals: [String: CoreMetrics.Counter]
    /// `linkout_tokens_reminded_total`: UNREPORTED for a token linkout knows and had not reported: the
    /// no-purchase window or the reporter is wrong.
    let reminded: CoreMetrics.Counter

    init(factory: PrometheusMetricsFactory) {
        outcomes = Dictionary(uniqueKeysWithValues: NotificationOutcome.allCases.map { outcome in
            (outcome, CoreMetrics.Counter(label: "linkout_notifications_total", dimensions: [("outcome", outcome.rawValue)], factory: factory))
        })
        refusals = Dictionary(uniqueKeysWithValues: NotificationRefusal.Reason.allCases.map(\.rawValue).map { reason in
            (reason, CoreMetrics.Counter(label: "linkout_notifications_refused_total", dimensions: [("reason", reason)], factory: factory))
        })
        reminded = CoreMetrics.Counter(label: "linkout_tokens_reminded_total", dimensions: [], factory: factory)
    }
}
