import CoreMetrics
import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// With no `reporting` section nothing is sent to Apple, yet every token recorded must be reported: this
/// thread keeps the token gauges counting (`linkout_reporting_enabled` 0 beside them) and says in the log,
/// at the first count and once a day, how many tokens are not reported.
final class ReportingOffWatch: @unchecked Sendable {
    private let worker = PeriodicWorker(name: "linkout-report", interval: 60)
    private let gauges: ReportingStatusGauges
    private let store: any ReportStatusStore
    private let logger: Logger
    private let config: String
    private let clock: TimeSource
    private var lastLogAt: Int64?

    init(store: any ReportStatusStore, metrics: ReportingMetrics, logger: Logger, config: String, clock: TimeSource) {
        self.store = store
        self.clock = clock
        self.gauges = ReportingStatusGauges(
            store: store, metrics: metrics, noPurchaseAfterMs: ReportingSettings.defaultNoPurchaseAfterMs,
            gatherMs: ReportingSettings.defaultGatherMs, closeDay: MonthClose.defaultCloseDay,
            logger: logger, clock: clock, warnsOfRefusals: false)
        self.logger = logger
        self.config = config
        metrics.enabled.record(0)
    }

    func start() {
        worker.start { [self] in
            // SQLite brings new visits into reporting's table when someone asks; the reporter would.
            try? store.syncTokens()
            let now = clock.nowMs()
            if let summary = gauges.refresh(now: now), lastLogAt.map({ now - $0 >= 86_400_000 }) ?? true {
                let unreported = summary.rows.reduce(Int64(0)) { $0 + $1.waiting + $1.due + $1.sending + $1.retrying + $1.failed }
                // None yet: the start-up line said reporting is off; this one comes with the first token.
                if unreported > 0 {
                    lastLogAt = now
                    logger.warning(
                        "reporting is OFF: \(unreported) token(s) recorded and none reported to Apple; add a reporting section to \(config)"
                    )
                }
            }
            return false
        }
    }

    func stop() { worker.stop() }
}

extension ReportingOffWatch: ServerPart {
    var partName: String { "the reporting-off watch" }
}
