import LinkOutCore
import LinkOutStore
import Logging

/// Reporting as `serve` runs it: with a `reporting` section the reporter, which sends every token to
/// Apple on its own thread (the intakes and the API wake it); without one the watch that keeps the
/// token gauges counting and says, at start and daily, what is not reported.
struct ReportingPart {
    let reporter: Reporter?
    let offWatch: ReportingOffWatch?

    init(setup: ServeSetup, metrics: GatewayMetrics, connection: (String) throws -> any ReportingStore) throws {
        let logger = setup.logger
        guard let reporting = setup.config.reporting else {
            reporter = nil
            logger.warning(
                "reporting is OFF: \(setup.configPath) has no reporting section, so no token is reported to Apple, which expects every one reported (docs/reporting.md)"
            )
            // The tokens' gauges and the daily count in the log all the same; a store that cannot be opened
            // for it (PostgreSQL down at start) is said, and serving goes on.
            do {
                offWatch = ReportingOffWatch(
                    store: try connection("the reporting-off watch"), metrics: metrics.reporting, logger: logger, config: setup.configPath,
                    clock: setup.clock)
            } catch {
                logger.error("reporting is OFF, and its tokens cannot be counted: \(error)")
                offWatch = nil
            }
            return
        }
        let store = try connection("the reporter")
        Reporter.logState(store, now: setup.clock.nowMs(), logger: logger)
        do {
            reporter = try Reporter(settings: reporting, store: store, logger: logger, metrics: metrics, clock: setup.clock)
        } catch {
            throw ServerError("cannot start reporting: \(error)")
        }
        offWatch = nil
    }
}
