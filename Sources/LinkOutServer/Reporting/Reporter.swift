import CoreMetrics
import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// Sees every recorded token through to Apple: plans the reports that are due, sends them several at once,
/// and keeps Apple's answer. Runs on its own thread in `serve` (never on a loop thread: it waits on Apple
/// and on the store), and once through for `linkout report run`.
///
/// The outbox is in the store, so nothing is lost to a crash: a report leased by a sender that died is
/// taken again when its lease runs out, with the same `requestIdentifier`, and if Apple had already
/// taken it, Apple's duplicate answer and a GET confirm it instead of it counting twice.
package final class Reporter: @unchecked Sendable {
    private let settings: ReportingSettings
    private let store: any OutboxStore & ReportStatusStore
    private let client: AppleReportClient
    private let logger: Logger
    private let metrics: ReportingMetrics?
    /// The time of each round's plans, leases, JWTs and backoffs.
    private let clock: TimeSource
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

        enum Kind { case accepted, failed, retried, unauthorized }

        mutating func count(_ kind: Kind) {
            switch kind {
            case .accepted: accepted += 1
            case .failed: failed += 1
            case .retried: retried += 1
            case .unauthorized: unauthorized += 1
            }
        }
    }

    /// - Parameter settings: with `privateKeyPEM` read from `keyFile`.
    /// - Parameter clock: `serve`'s one clock, or the command's.
    package init(
        settings: ReportingSettings, store: any OutboxStore & ReportStatusStore, logger: Logger, metrics: GatewayMetrics? = nil,
        clock: TimeSource
    ) throws {
        self.settings = settings
        self.store = store
        self.client = try AppleReportClient(settings: settings)
        self.concurrency = SendConcurrency(ceiling: settings.maxConcurrentRequests)
        self.logger = logger
        self.metrics = metrics?.reporting
        self.clock = clock
        self.worker = PeriodicWorker(name: "linkout-report", interval: settings.pollSeconds)
        self.gauges = ReportingStatusGauges(
            store: store, metrics: metrics?.reporting, noPurchaseAfterMs: settings.noPurchaseAfterMs, gatherMs: settings.gatherMs,
            closeDay: settings.monthCloseDay, logger: logger, clock: clock)
    }

    /// One round: plan what is due, then send every report that is due, until none is left: up to
    /// `concurrency.limit` requests in flight at once over the client's kept connections, the outcomes
    /// recorded a batch per transaction.
    package func runRound() -> Round {
        let now = clock.nowMs
        var round = Round()
        var sending = Sending()
        defer { client.abandonAll() }
        do {
            round.planned = try store.planReports(now: now(), noPurchaseAfterMs: settings.noPurchaseAfterMs, gatherMs: settings.gatherMs)
            while true {
                try startWhatMay(&sending, now: now)
                if sending.queue.isEmpty, !sending.drained, now() >= pausedUntil, now() >= concurrency.holdUntil {
                    try claim(&sending, now: now)
                    if !sending.queue.isEmpty { continue }
                }
                if sending.flying.isEmpty, sending.queue.isEmpty {
                    try flush(&sending, now: now)
                    // A 401's pause, or Apple's Retry-After: the round ends, and a later one sends the rest.
                    if now() < pausedUntil || now() < concurrency.holdUntil { break }
                    // A report planned while these were sent (new line items) goes in the same round.
                    guard sending.claimedSincePlan else { break }
                    sending.claimedSincePlan = false
                    let planned = try store.planReports(
                        now: now(), noPurchaseAfterMs: settings.noPurchaseAfterMs, gatherMs: settings.gatherMs)
                    round.planned += planned
                    if planned == 0 { break }
                    sending.drained = false
                    continue
                }
                for (ticket, answer) in client.answers(timeoutMs: 250) {
                    guard let report = sending.flying.removeValue(forKey: ticket) else { continue }
                    sending.answered = true
                    record(answer, now: now())
                    try settle(report, answer: answer, now: now, into: &sending, round: &round)
                }
                if sending.finishes.count >= Self.finishBatch || (sending.finishes.first.map { now() - $0.now >= 250 } ?? false) {
                    try flush(&sending, now: now)
                }
            }
        } catch {
            logger.error("reporting: the store failed", metadata: ["error": "\(error)"])
        }
        return round
    }

    /// A round's reports: claimed and not yet sent, in flight, and answered but not yet recorded.
    private struct Sending {
        var queue: [OutboxReport] = []
        /// When `queue` was claimed: a report left waiting for half its lease goes back unsent.
        var claimedAt: Int64 = 0
        var flying: [AppleReportClient.Ticket: OutboxReport] = [:]
        var finishes: [ReportFinish] = []
        /// The last claim found nothing: plan again once what is in flight has come back, before claiming.
        var drained = false
        /// An answer came in this round (until then one request is in flight at most).
        var answered = false
        /// Something was claimed since the last plan: plan again before the round ends.
        var claimedSincePlan = false
    }

    /// Outcomes recorded per transaction at most; fewer after a quiet quarter second.
    private static let finishBatch = 64

    /// How many reports are claimed at once: enough to keep the ceiling's requests in flight for a while.
    private var claimSize: Int { max(batch, 4 * settings.maxConcurrentRequests) }

    /// The adaptive number of requests in flight, kept across rounds.
    private var concurrency: SendConcurrency

    private func claim(_ sending: inout Sending, now: () -> Int64) throws {
        sending.claimedAt = now()
        sending.queue = try store.claimReports(now: sending.claimedAt, leaseMs: settings.leaseMs, limit: claimSize).reversed()
        if sending.queue.isEmpty { sending.drained = true } else { sending.claimedSincePlan = true }
    }

    /// Starts the queue's reports while the concurrency allows; after a 401, or when the queue waited
    /// too long, what is left goes back to the outbox unsent (its attempt not counted).
    private func startWhatMay(_ sending: inout Sending, now: () -> Int64) throws {
        let stale = now() - sending.claimedAt >= settings.leaseMs / 2
        if now() < pausedUntil || stale || now() < concurrency.holdUntil {
            let next = max(pausedUntil, concurrency.holdUntil, now())
            for report in sending.queue.reversed() {
                sending.finishes.append(ReportFinish(report, .notSent(nextAttemptAt: next), now: now()))
            }
            sending.queue = []
            return
        }
        // The round's first send goes alone: a refused key (401) or a hung Apple meets one request, not a window.
        while !sending.queue.isEmpty, concurrency.mayStart(inFlight: sending.flying.count, now: now()),
            sending.answered || sending.flying.isEmpty
        {
            let report = sending.queue.removeLast()
            sending.flying[client.startSend(report, now: now())] = report
        }
    }

    private func flush(_ sending: inout Sending, now: () -> Int64) throws {
        try store.finish(sending.finishes)
        sending.finishes = []
    }

    /// Tells the concurrency what an answer says of Apple's load.
    private func record(_ answer: AppleReportClient.Answer, now: Int64) {
        switch answer.status {
        case nil: concurrency.record(.noAnswer, now: now)
        case let status? where status == 429 || status >= 500:
            concurrency.record(.strained(retryAfterMs: answer.retryAfter.flatMap { ReportAnswer.retryAfterMs($0, now: now) }), now: now)
        case _: concurrency.record(.answered(latencyMs: answer.latencyMs), now: now)
        }
        metrics?.inFlightLimit.record(concurrency.limit)
    }

    private func settle(
        _ report: OutboxReport, answer: AppleReportClient.Answer, now: () -> Int64, into sending: inout Sending, round: inout Round
    ) throws {
        let settled = settle(report, answer: answer, now: now)
        if settled.kind == .unauthorized {
            pausedUntil = now() + Self.pauseAfterUnauthorizedMs
            metrics?.paused.record(1)
        }
        sending.finishes.append(ReportFinish(report, settled.outcome(pausedUntil), now: now()))
        if settled.kind == .unauthorized { try flush(&sending, now: now) }
        round.count(settled.kind)
        metrics?.count(settled.kind)
        var metadata: Logger.Metadata = [
            "requestIdentifier": "\(report.requestIdentifier)", "externalPurchaseId": "\(report.externalPurchaseId)",
            "status": "\(report.status)", "environment": "\(report.environment.rawValue)", "attempt": "\(report.attempts)",
        ]
        metadata.merge(settled.metadata) { $1 }
        logger.log(level: settled.level, "reporting: \(settled.message)", metadata: metadata)
        if now() >= pausedUntil { metrics?.paused.record(0) }
    }

    /// How one send ended, for the store, the round's and the metrics' counts, and the log: the outcome
    /// table of `send`, one row per way Apple answers.
    private struct Settled {
        var kind: Round.Kind
        /// The store's outcome, given the pause a 401 begins.
        var outcome: (_ pausedUntil: Int64) -> ReportOutcome
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata = [:]
    }

    /// Apple's answer to a send, settled: read back with GET where it may hold the report already.
    private func settle(_ report: OutboxReport, answer: AppleReportClient.Answer, now: () -> Int64) -> Settled {
        let summary = answer.status.map { "HTTP \($0) \(answer.body)" } ?? "no answer: \(answer.transportError)"
        // This answer, if a failure, is the report's next one: the backoff counts Apple's failures only.
        let failures = report.failures + 1
        let held = Settled(
            kind: .accepted, outcome: { _ in .accepted(answer: "\(summary); confirmed by GET") }, level: .info,
            message: "Apple already held this report (confirmed by GET)")
        switch ReportAnswer.classify(
            status: answer.status, body: answer.body, retryAfter: answer.retryAfter, failures: failures,
            now: now(), firstBackoffMs: settings.retryMs, transportError: answer.transportError)
        {
        case .accepted:
            return Settled(kind: .accepted, outcome: { _ in .accepted(answer: summary) }, level: .info, message: "Apple accepted a report")
        case .confirmDuplicate:
            // An earlier send landed and its answer was lost: Apple holds the report if it can return it.
            let check = client.fetch(report, now: now())
            if check.status == 200 { return held }
            let next = now() + ReportAnswer.backoff(failures: failures, first: settings.retryMs)
            let why = "HTTP 400 duplicate, then GET: \(check.status.map(String.init) ?? check.transportError)"
            return Settled(
                kind: .retried, outcome: { _ in .retry(nextAttemptAt: next, answer: why, status: check.status) }, level: .warning,
                message: "Apple called a report a duplicate but did not return it; retrying")
        case .failed(let errors):
            // A resend after an answer that never came may meet the first send still in Apple's hands (a
            // simultaneous submission) or already taken: if Apple returns the report, it holds it.
            if report.attempts > 1, client.fetch(report, now: now()).status == 200 { return held }
            let retryAt = RefusalRetry.nextAttempt(
                status: report.status, answer: answer.body, refusals: report.refusals + 1, now: now(), firstWaitMs: settings.refusedRetryMs,
                limit: settings.refusedRetries)
            var metadata: Logger.Metadata = ["errors": "\(errors)", "refusals": "\(report.refusals + 1)"]
            let message: String
            if let retryAt {
                metadata["retryAt"] = "\(UTCDate.format(milliseconds: retryAt))"
                message =
                    "Apple refused a report; nothing in Apple's errors names its line items, so it is sent again on its own at retryAt (linkout report retry sends it now)"
            } else if RefusalRetry.mayBeApplesState(
                status: report.status, errors: ExternalPurchaseReportError.parseErrors(Array(answer.body.utf8)))
            {
                message =
                    "Apple refused a report, which is not sent again on its own (reporting.refusedRetries reached): linkout report retry \(report.requestIdentifier) sends it again"
            } else {
                message =
                    "Apple refused a report's line items; correct them (a restatement) to send a new report, or linkout report retry \(report.requestIdentifier) to send it unchanged"
            }
            return Settled(
                kind: .failed, outcome: { _ in .failed(answer: summary, retryAt: retryAt) }, level: .error, message: message,
                metadata: metadata)
        case .retry(let afterMs, let why):
            let next = now() + afterMs
            return Settled(
                kind: .retried, outcome: { _ in .retry(nextAttemptAt: next, answer: summary, status: answer.status) }, level: .warning,
                message: "no answer from Apple; the same report will be sent again",
                metadata: ["why": "\(why)", "retryInSeconds": "\(afterMs / 1000)"])
        case .unauthorized:
            return Settled(
                kind: .unauthorized, outcome: { .unauthorized(nextAttemptAt: $0, answer: summary, status: answer.status ?? 401) },
                level: .critical,
                message:
                    "Apple refused the key (401); nothing is sent for 5 minutes. Check reporting.keyFile, keyId, issuerId and the apps' bundle IDs"
            )
        }
    }

    static let pauseAfterUnauthorizedMs: Int64 = 300_000

    // MARK: The thread in `serve`

    package func start() {
        metrics?.enabled.record(1)
        // A pause a 401 began before a restart still holds: its reports wait until it ends.
        if let until = try? store.health(now: clock.nowMs(), waitingLimit: 0).pausedUntil {
            pausedUntil = until
            metrics?.paused.record(1)
        }
        worker.start { [self] in
            let round = runRound()
            gauges.refresh(now: clock.nowMs())
            if round.sent > 0 || round.planned > 0 {
                logger.debug(
                    "reporting round",
                    metadata: [
                        "planned": "\(round.planned)", "accepted": "\(round.accepted)", "failed": "\(round.failed)",
                        "retried": "\(round.retried)",
                    ])
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

extension Reporter: ServerPart {
    var partName: String { "reporting" }
}
