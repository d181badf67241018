import CoreMetrics
import Prometheus

/// The checkout's API: every answer by status, so refusals (401 bad key, 429 over the key's rate, 503 queue
/// full, 413 body too large) show beside what was stored (200).
final class APIMetrics: Sendable {
    /// The statuses the API answers with; anything else counts as `other`.
    static let statuses = [200, 400, 401, 404, 405, 413, 415, 429, 503]

    /// `linkout_api_requests_total{status}`.
    private let byStatus: [Int: CoreMetrics.Counter]
    private let other: CoreMetrics.Counter

    init(factory: PrometheusMetricsFactory) {
        byStatus = Dictionary(
            uniqueKeysWithValues: Self.statuses.map { status in
                (status, CoreMetrics.Counter(label: "linkout_api_requests_total", dimensions: [("status", "\(status)")], factory: factory))
            })
        other = CoreMetrics.Counter(label: "linkout_api_requests_total", dimensions: [("status", "other")], factory: factory)
    }

    func answered(status: Int) {
        (byStatus[status] ?? other).increment()
    }
}
