import LinkOutCore
import LinkOutStore
import Logging

extension Reporter {
    /// At start-up, what the outbox holds from before: a paused reporter, reports waiting to be sent again
    /// and why, so the operator sees it where they look first.
    static func logState(_ store: any OutboxStore & ReportStatusStore, now: Int64, logger: Logger) {
        guard let health = try? store.health(now: now, waitingLimit: 0) else { return }
        if let until = health.pausedUntil {
            logger.critical(
                "reporting is PAUSED until \(UTCDate.format(milliseconds: until)): Apple refused the key (401) before this start; check reporting.keyFile, keyId, issuerId and the apps' bundle IDs"
            )
        }
        if let refused = try? store.refusedCount(), refused.count > 0 {
            logger.warning("reporting is on, and \(RefusedReportsText.line(refused))")
        }
        guard health.open > 0 else {
            logger.notice("reporting is on: no report waiting")
            return
        }
        var metadata: Logger.Metadata = [
            "toSend": "\(health.toSend)", "retrying": "\(health.retrying + health.sending)",
        ]
        if let next = health.nextTryAt { metadata["nextTry"] = "\(UTCDate.format(milliseconds: next))" }
        if let error = health.lastError { metadata["lastError"] = "\(error.answer.prefix(300))" }
        logger.notice("reporting is on: reports waiting in the outbox (linkout report status lists them)", metadata: metadata)
    }
}
