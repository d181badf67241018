import CoreMetrics
import LinkOutCore
import LinkOutStore
import Prometheus

/// Every metric the gateway exports, created once through swift-metrics with a Prometheus backend, so a
/// request only increments counters it already holds (an atomic add, no look-up by name).
///
/// Labels are link ids, destination URLs from the config and reason codes: bounded sets, never anything
/// taken from a request.
package final class GatewayMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory

    /// `linkout_destination_up{target}`: 1 while a health-checked target passes, 0 once it is marked down.
    /// Made on the health checker's thread when a target changes (rarely), from the config's URLs.
    func destinationUp(_ target: String) -> CoreMetrics.Recorder {
        CoreMetrics.Recorder(label: "linkout_destination_up", dimensions: [("target", target)], aggregate: false, factory: factory)
    }

    let notFound: CoreMetrics.Counter
    let methodNotAllowed: CoreMetrics.Counter
    let healthChecks: CoreMetrics.Counter
    let malformed: CoreMetrics.Counter
    let slowClientsClosed: CoreMetrics.Counter
    let commitDuration: CoreMetrics.Timer
    let commitBatchSize: CoreMetrics.Recorder
    let commitFailures: CoreMetrics.Counter
    let queueDepth: CoreMetrics.Recorder
    let spoolVisits: CoreMetrics.Recorder
    let storeDegraded: CoreMetrics.Recorder
    let reporting: ReportingMetrics
    let notifications: NotificationMetrics
    let api: APIMetrics
    let providers: PaymentProviderMetrics
    /// Valid tokens on a path no link serves, recorded as link `unrouted` (no path label: paths come from
    /// requests; the log names them).
    let unroutedTokens: CoreMetrics.Counter
    /// `linkout_unusual_tokens_total{why}`: tokens recorded although of a shape Apple has not documented
    /// (a new `tokenType`, one custom-link field without the other), so an operator sees a new kind arrive.
    let unusualTokens: [UnusualTokenType: CoreMetrics.Counter]
    /// `linkout_visits_total{link="registered",kind="registered"}`: tokens the app's backend handed over
    /// (`POST /v1/tokens`) that went to the writer, as a link's visits count when handed over. A token
    /// already recorded is not handed over again, so each token counts once, however often it is sent.
    let registeredTokens: CoreMetrics.Counter

    package init(version: String) {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["linkout_commit_seconds"] = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
        factory.valueHistogramBuckets["linkout_commit_batch_size"] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 4096]
        self.factory = factory
        notFound = CoreMetrics.Counter(label: "linkout_requests_total", dimensions: [("kind", "not_found")], factory: factory)
        methodNotAllowed = CoreMetrics.Counter(
            label: "linkout_requests_total", dimensions: [("kind", "method_not_allowed")], factory: factory)
        healthChecks = CoreMetrics.Counter(label: "linkout_requests_total", dimensions: [("kind", "health")], factory: factory)
        malformed = CoreMetrics.Counter(label: "linkout_requests_total", dimensions: [("kind", "malformed")], factory: factory)
        slowClientsClosed = CoreMetrics.Counter(label: "linkout_slow_clients_closed_total", dimensions: [], factory: factory)
        commitDuration = CoreMetrics.Timer(label: "linkout_commit_seconds", dimensions: [], factory: factory)
        commitBatchSize = CoreMetrics.Recorder(label: "linkout_commit_batch_size", dimensions: [], aggregate: true, factory: factory)
        commitFailures = CoreMetrics.Counter(label: "linkout_commit_failures_total", dimensions: [], factory: factory)
        queueDepth = CoreMetrics.Recorder(label: "linkout_writer_queue_depth", dimensions: [], aggregate: false, factory: factory)
        spoolVisits = CoreMetrics.Recorder(label: "linkout_spool_visits", dimensions: [], aggregate: false, factory: factory)
        storeDegraded = CoreMetrics.Recorder(label: "linkout_store_degraded", dimensions: [], aggregate: false, factory: factory)
        reporting = ReportingMetrics(factory: factory)
        notifications = NotificationMetrics(factory: factory)
        api = APIMetrics(factory: factory)
        providers = PaymentProviderMetrics(factory: factory)
        unroutedTokens = CoreMetrics.Counter(label: "linkout_unrouted_tokens_total", dimensions: [], factory: factory)
        unusualTokens = Dictionary(
            uniqueKeysWithValues: UnusualTokenType.allCases.map { why in
                (why, CoreMetrics.Counter(label: "linkout_unusual_tokens_total", dimensions: [("why", why.rawValue)], factory: factory))
            })
        registeredTokens = CoreMetrics.Counter(
            label: "linkout_visits_total",
            dimensions: [("link", TokenRegistration.registeredLink), ("kind", VisitKind.registered.rawValue)],
            factory: factory)
        CoreMetrics.Recorder(label: "linkout_build_info", dimensions: [("version", version)], aggregate: false, factory: factory).record(1)
    }

    /// The counters of each configured link, in the config's order (a reload makes a new set; counters
    /// with the same labels are the same series).
    func linkMetrics(for links: [Link]) -> [LinkMetrics] {
        links.map { LinkMetrics(link: $0, factory: factory) }
    }

    /// The Prometheus text exposition of everything, with the queue depth read now.
    func render(queueDepth depth: Int, outage: StoreOutageStatus? = nil) -> [UInt8] {
        queueDepth.record(depth)
        if let outage {
            spoolVisits.record(outage.spooledVisits)
            storeDegraded.record(outage.degraded ? 1 : 0)
        }
        return registry.emitToBuffer()
    }
}

/// One link's counters.
final class LinkMetrics: Sendable {
    let redirected: CoreMetrics.Counter
    let redirectedWithoutToken: CoreMetrics.Counter
    /// Taps on a link that expects no token, sent on: not refusals.
    let tapped: CoreMetrics.Counter
    let rejected: CoreMetrics.Counter
    let unavailable: CoreMetrics.Counter
    let rateLimited: CoreMetrics.Counter
    let rejections: [RejectReason: CoreMetrics.Counter]
    /// By `Link.destinationURLs`.
    let destinations: [CoreMetrics.Counter]
    /// Link-out visits handed to the store, by kind (shopper, prefetch, head, bot). Registrations pass no
    /// link: they count under link `registered` (`GatewayMetrics.registeredTokens`), not as a zero here.
    let visits: [VisitKind: CoreMetrics.Counter]
    /// Redirects sent to a fallback or least-bad destination because every one was down.
    let allDown: CoreMetrics.Counter

    init(link: Link, factory: PrometheusMetricsFactory) {
        func outcome(_ name: String) -> CoreMetrics.Counter {
            CoreMetrics.Counter(label: "linkout_link_requests_total", dimensions: [("link", link.id), ("outcome", name)], factory: factory)
        }
        redirected = outcome("redirect")
        redirectedWithoutToken = outcome("redirect_invalid_token")
        tapped = outcome("tap")
        rejected = outcome("rejected")
        unavailable = outcome("unavailable")
        rateLimited = outcome("rate_limited")
        rejections = Dictionary(
            uniqueKeysWithValues: RejectReason.allCases.map { reason in
                (
                    reason,
                    CoreMetrics.Counter(
                        label: "linkout_rejections_total", dimensions: [("link", link.id), ("reason", reason.rawValue)], factory: factory)
                )
            })
        destinations = link.destinationURLs.map { url in
            CoreMetrics.Counter(label: "linkout_redirects_total", dimensions: [("link", link.id), ("destination", url)], factory: factory)
        }
        visits = Dictionary(
            uniqueKeysWithValues: VisitKind.allCases.filter(\.isVisit).map { kind in
                (
                    kind,
                    CoreMetrics.Counter(
                        label: "linkout_visits_total", dimensions: [("link", link.id), ("kind", kind.rawValue)], factory: factory)
                )
            })
        allDown = CoreMetrics.Counter(label: "linkout_all_destinations_down_total", dimensions: [("link", link.id)], factory: factory)
    }
}
