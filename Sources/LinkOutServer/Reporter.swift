import CoreMetrics
import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// Sees every recorded token through to Apple: plans the reports that are due, sends them one by one,
/// and keeps Apple's answer. Runs on its own thread in `serve` (never on a loop thread: it waits on Apple
/// and on the store), and once through for `linkout report run`.
///
/// The outbox is in the store, so nothing is lost to a crash: a report leased by a sender that died is
/// taken again when its lease runs out, with the same `requestIdentifier`, and if Apple had already
/// taken it, Apple's duplicate answer and a GET confirm it instead of it counting twice.
package final class Reporter: @unchecked Sendable {
    private let settings: ReportingSettings
    private let store: any ReportingStore
    private let client: AppleReportClient
    private let logger: Logger
    private let metrics: ReportingMetrics?
    /// Reports taken per round; the rest wait for the next round.
    private let batch = 50

    /// After a 401 nothing is sent until this time (Unix ms): every report would fail the same way.
    private var pausedUntil: Int64 = 0
    private let gauges: ReportingStatusGauges

    private let worker: PeriodicWorker

    /// What one round did.
    package struct Round: Sendable, Equatable {
        package var planned = 0
        package var accepted = 0
        package var failed = 0
        package var retried = 0
        package var unauthorized = 0
        package init() {}
        var sent: Int { accepted + failed + retried + unauthorized }
    }

    /// - Parameter settings: with `privateKeyPEM` read from `keyFile`.
    package init(settings: ReportingSettings, store: any ReportingStore, logger: Logger, metrics: GatewayMetrics? = nil) throws {
        self.settings = settings
        self.store = store
        self.client = try AppleReportClient(settings: settings)
        self.logger = logger
        self.metrics = metrics?.reporting
        self.worker = PeriodicWorker(name: "linkout-report", interval: settings.pollSeconds)
        self.gauges = ReportingStatusGauges(
            store: store, metrics: metrics?.reporting, noPurchaseAfterMs: settings.noPurchaseAfterMs, closeDay: settings.monthCloseDay, logger: logger)
    }

    /// Unix ms now.
    package static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// One round: plan what is due, then send every report that is due, until none is left.
    package func runRound(now: () -> Int64 = Reporter.now) -> Round {
        var round = Round()
        do {
            round.planned = try store.planReports(now: now(), noPurchaseAfterMs: settings.noPurchaseAfterMs, gatherMs: settings.gatherMs)
            while now() >= pausedUntil {
                let claimed = try store.claimReports(now: now(), leaseMs: settings.leaseMs, limit: batch)
                if claimed.isEmpty { break }
                for report in claimed {
                    try send(report, now: now, round: &round)
                }
                // A report planned while these were sent (new line items) goes in the same round.
                round.planned += try store.planReports(now: now(), noPurchaseAfterMs: settings.noPurchaseAfterMs, gatherMs: settings.gatherMs)
            }
        } catch {
            logger.error("reporting: the store failed", metadata: ["error": "\(error)"])
        }
        return round
    }

    private func send(_ report: OutboxReport, now: () -> Int64, round: inout Round) throws {
        let metadata: Logger.Metadata = [
            "requestIdentifier": "\(report.requestIdentifier)", "externalPurchaseId": "\(report.externalPurchaseId)",
            "status": "\(report.status)", "environment": "\(report.environment.rawValue)", "attempt": "\(report.attempts)",
        ]
        if now() < pausedUntil {
            try store.finish(report, .notSent(nextAttemptAt: pausedUntil), now: now())
            return
        }
        let answer = client.send(report, now: now())
        let summary = answer.status.map { "HTTP \($0) \(answer.body)" } ?? "no answer: \(answer.transportError)"
        // This answer, if a failure, is the report's next one: the backoff counts Apple's failures only.
        let failures = report.failures + 1
        switch ReportAnswer.classify(
            status: answer.status, body: answer.body, retryAfter: answer.retryAfter, failures: failures,
            now: now(), firstBackoffMs: settings.retryMs, transportError: answer.transportError) {
        case .accepted:
            try store.finish(report, .accepted(answer: summary), now: now())
            round.accepted += 1
            metrics?.accepted.increment()
            logger.info("reporting: Apple accepted a report", metadata: metadata)
        case .confirmDuplicate:
            // An earlier send landed and its answer was lost: Apple holds the report if it can return it.
            let check = client.fetch(report, now: now())
            if check.status == 200 {
                try store.finish(report, .accepted(answer: "HTTP 400 duplicate; confirmed by GET: \(check.body)"), now: now())
                round.accepted += 1
                metrics?.accepted.increment()
                logger.info("reporting: Apple already held this report (confirmed by GET)", metadata: metadata)
            } else {
                let wait = ReportAnswer.backoff(failures: failures, first: settings.retryMs)
                try store.finish(report, .retry(
                    nextAttemptAt: now() + wait, answer: "HTTP 400 duplicate, then GET: \(check.status.map(String.init) ?? check.transportError)",
                    status: check.status), now: now())
                round.retried += 1
                metrics?.retried.increment()
                logger.warning("reporting: Apple called a report a duplicate but did not return it; retrying", metadata: metadata)
            }
        case .failed(let errors):
            // A resend after an answer that never came may meet the first send still in Apple's hands (a
            // simultaneous submission) or already taken: if Apple returns the report, it holds it.
            if report.attempts > 1, client.fetch(report, now: now()).status == 200 {
                try store.finish(report, .accepted(answer: "\(summary); confirmed by GET"), now: now())
                round.accepted += 1
                metrics?.accepted.increment()
                logger.info("reporting: Apple already held this report (confirmed by GET)", metadata: metadata)
                break
            }
            try store.finish(report, .failed(answer: summary), now: now())
            round.failed += 1
            metrics?.failed.increment()
            var failed = metadata
            failed["errors"] = "\(errors)"
            logger.error("reporting: Apple refused a report; correct its line items (a restatement) to send it again", metadata: failed)
        case .retry(let afterMs, let why):
            try store.finish(report, .retry(nextAttemptAt: now() + afterMs, answer: summary, status: answer.status), now: now())
            round.retried += 1
            metrics?.retried.increment()
            var retried = metadata
            retried["why"] = "\(why)"
            retried["retryInSeconds"] = "\(afterMs / 1000)"
            logger.warning("reporting: no answer from Apple; the same report will be sent again", metadata: retried)
        case .unauthorized:
            pausedUntil = now() + Self.pauseAfterUnauthorizedMs
            try store.finish(report, .unauthorized(nextAttemptAt: pausedUntil, answer: summary, status: answer.status ?? 401), now: now())
            round.unauthorized += 1
            metrics?.unauthorized.increment()
            metrics?.paused.record(1)
            logger.critical(
                "reporting: Apple refused the key (401); nothing is sent for 5 minutes. Check reporting.keyFile, keyId, issuerId and the apps' bundle IDs",
                metadata: metadata)
        }
        if now() >= pausedUntil { metrics?.paused.record(0) }
    }

    static let pauseAfterUnauthorizedMs: Int64 = 300_000

    // MARK: The thread in `serve`

    package func start() {
        metrics?.enabled.record(1)
        // A pause a 401 began before a restart still holds: its reports wait until it ends.
        if let until = try? store.health(now: Self.now(), waitingLimit: 0).pausedUntil {
            pausedUntil = until
            metrics?.paused.record(1)
        }
        worker.start { [self] in
            let round = runRound()
            gauges.refresh(now: Self.now())
            if round.sent > 0 || round.planned > 0 {
                logger.debug("reporting round", metadata: ["planned": "\(round.planned)", "accepted": "\(round.accepted)", "failed": "\(round.failed)", "retried": "\(round.retried)"])
            }
            return false
        }
    }

    /// Makes the reporter look for work now (new line items arrived).
    package func wake() {
        worker.wake()
    }

    /// Waits for the round in progress (a send in flight ends within the client's timeout).
    package func stop() {
        worker.stop()
    }
}
