import CoreMetrics
import LinkOutCore
import LinkOutStore
import Prometheus

/// The payment providers' webhooks: what became of each event, and why the refused ones were refused.
final class PaymentProviderMetrics: Sendable {
    /// `linkout_provider_events_total{provider, outcome}`: taken, ignored, unmatched, parked, waiting, held,
    /// duplicate. A parked event taken later counts again under its new outcome.
    let outcomes: [String: CoreMetrics.Counter]
    /// `linkout_provider_events_refused_total{provider, reason}`: 400s, nothing stored (a bad or stale
    /// signature, a malformed body).
    let refusals: [String: CoreMetrics.Counter]

    static let refusalReasons = ["missing_signature", "malformed_signature", "bad_signature", "stale_signature", "malformed_event"]

    init(factory: PrometheusMetricsFactory) {
        var outcomes: [String: CoreMetrics.Counter] = [:]
        var refusals: [String: CoreMetrics.Counter] = [:]
        for provider in PaymentProvider.allCases {
            for outcome in ProviderOutcome.allCases {
                outcomes["\(provider.rawValue)/\(outcome.rawValue)"] = CoreMetrics.Counter(
                    label: "linkout_provider_events_total", dimensions: [("provider", provider.rawValue), ("outcome", outcome.rawValue)],
                    factory: factory)
            }
            for reason in Self.refusalReasons {
                refusals["\(provider.rawValue)/\(reason)"] = CoreMetrics.Counter(
                    label: "linkout_provider_events_refused_total", dimensions: [("provider", provider.rawValue), ("reason", reason)],
                    factory: factory)
            }
        }
        self.outcomes = outcomes
        self.refusals = refusals
    }

    func count(_ provider: PaymentProvider, _ outcome: ProviderOutcome) {
        outcomes["\(provider.rawValue)/\(outcome.rawValue)"]?.increment()
    }

    func refused(_ provider: PaymentProvider, _ reason: String) {
        refusals["\(provider.rawValue)/\(reason)"]?.increment()
    }
}
