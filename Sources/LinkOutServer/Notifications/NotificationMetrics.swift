import CoreMetrics
import LinkOutCore
import Prometheus

/// Apple's notifications: what linkout did with each, why it refused the others, and the tokens Apple
/// reminded of before linkout reported them.
final class NotificationMetrics: Sendable {
    /// `linkout_notifications_total{outcome}`: report_due, already_reported, report_blocked, unrecognized,
    /// token_recorded, stored, duplicate.
    let outcomes: [NotificationOutcome: CoreMetrics.Counter]
    /// `linkout_notifications_refused_total{reason}`: one series per `NotificationRefusal.Reason`, the
    /// verifier's and the gateway's (rate_limited, busy, body_too_large, slow_body) alike.
    let refusals: [String: CoreMetrics.Counter]
    /// `linkout_notification_chains_verified_total`: x5c chains whose signatures were checked, i.e. not
    /// answered from the verdict cache nor refused by the screen; Apple's chains show here once each.
    let chainsVerified: CoreMetrics.Counter
    /// `linkout_tokens_reminded_total`: UNREPORTED for a token linkout knows and had not reported: the
    /// no-purchase window or the reporter is wrong.
    let reminded: CoreMetrics.Counter

    init(factory: PrometheusMetricsFactory) {
        outcomes = Dictionary(
            uniqueKeysWithValues: NotificationOutcome.allCases.map { outcome in
                (
                    outcome,
                    CoreMetrics.Counter(label: "linkout_notifications_total", dimensions: [("outcome", outcome.rawValue)], factory: factory)
                )
            })
        refusals = Dictionary(
            uniqueKeysWithValues: NotificationRefusal.Reason.allCases.map(\.rawValue).map { reason in
                (
                    reason,
                    CoreMetrics.Counter(label: "linkout_notifications_refused_total", dimensions: [("reason", reason)], factory: factory)
                )
            })
        reminded = CoreMetrics.Counter(label: "linkout_tokens_reminded_total", dimensions: [], factory: factory)
        chainsVerified = CoreMetrics.Counter(label: "linkout_notification_chains_verified_total", dimensions: [], factory: factory)
    }
}
