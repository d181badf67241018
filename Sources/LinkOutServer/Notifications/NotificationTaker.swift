import CoreMetrics
import LinkOutCore
import LinkOutStore
import Logging

/// What linkout does with a notification once its signatures are verified, whichever way it came (pushed by
/// Apple to the notification path, or read back from Apple's notification history): recorded once per
/// `notificationUUID` (the store's rule), counted, said in the log, and the reporter woken when a report is
/// due.
struct NotificationTaker: Sendable {
    let logger: Logger
    let metrics: NotificationMetrics
    let wakeReporter: @Sendable () -> Void
    /// When each notification is recorded.
    let clock: TimeSource

    /// - Parameter source: how it came, for the log ("Apple" pushed it, "Apple's history" was read).
    func take(_ verified: VerifiedNotification, store: any NotificationStore, from source: String) throws -> NotificationOutcome {
        let outcome = try store.recordNotification(verified, now: clock.nowMs())
        metrics.outcomes[outcome]?.increment()
        var metadata = Self.metadata(verified)
        metadata["outcome"] = "\(outcome.rawValue)"
        metadata["from"] = "\(source)"
        switch outcome {
        case .reportDue, .reportBlocked:
            // Apple's day-10 reminder came before linkout's report: the window or the reporter is wrong.
            metrics.reminded.increment()
            logger.warning(
                "notifications: Apple reminded of a token linkout has not reported yet; reporting it now. Check reporting.noPurchaseAfterHours and the reporter",
                metadata: metadata)
        case .unrecognized:
            logger.notice("notifications: Apple named a token linkout never saw; reporting it UNRECOGNIZED_TOKEN", metadata: metadata)
        case .duplicate:
            logger.info("notifications: a notification already taken (Apple's retry)", metadata: metadata)
        default:
            logger.info("notifications: notification stored", metadata: metadata)
        }
        if [.reportDue, .unrecognized, .tokenRecorded].contains(outcome) { wakeReporter() }
        return outcome
    }

    static func metadata(_ verified: VerifiedNotification, error: (any Error)? = nil) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "notificationUUID": "\(verified.notificationUUID)", "type": "\(verified.notificationType)",
            "subtype": "\(verified.subtype ?? "")", "environment": "\(verified.environment.rawValue)",
        ]
        if let id = verified.token?.externalPurchaseId { metadata["externalPurchaseId"] = "\(id)" }
        if let error { metadata["error"] = "\(error)" }
        return metadata
    }
}
