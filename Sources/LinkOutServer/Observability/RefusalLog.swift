import LinkOutCore
import LinkOutStore
import Logging

/// The log lines of one kind of refusal (Apple's notifications, the checkout's API): at most one per
/// minute per reason and client (`LogThrottle`), saying how many of the same were left out since the
/// last. A flood of refusals thus costs a counter each and a line a minute, while the first refusal from
/// a client is always seen. The caller counts every refusal in its metric; this only decides the lines.
///
/// Shared by the threads that refuse (the loops, the intake threads), behind a lock held for a
/// dictionary look-up.
final class RefusalLog: Sendable {
    private let logger: Logger
    /// What the lines are about: `notifications`, `api`.
    private let subject: String
    private let throttle = Locked(LogThrottle())
    /// Its monotonic side times the throttle's minute.
    private let clock: TimeSource

    init(logger: Logger, subject: String, clock: TimeSource) {
        self.logger = logger
        self.subject = subject
        self.clock = clock
    }

    /// One refusal of `reason` from `client`; logged at `level` with `message` and `metadata` when due.
    func note(
        reason: String, client: String, _ message: @autoclosure () -> String, metadata: @autoclosure () -> Logger.Metadata = [:],
        level: Logger.Level = .warning
    ) {
        let nowMs = clock.monotonicMilliseconds()
        let verdict = throttle.withLock { $0.admit("\(reason) \(client)", nowMs: nowMs) }
        switch verdict {
        case .suppress:
            return
        case .log(let suppressed):
            var fields = metadata()
            fields["reason"] = "\(reason)"
            fields["client"] = "\(client)"
            if suppressed > 0 { fields["suppressed"] = "\(suppressed)" }
            logger.log(
                level: level,
                "\(subject): \(message())\(suppressed > 0 ? " (and \(suppressed) more like it from this client since the last line)" : "")",
                metadata: fields)
        case .logOverflow(let count):
            logger.log(
                level: level,
                "\(subject): \(count) refusals from more clients than the log follows went unlogged since the last such line (every one is counted in the metrics)"
            )
        }
    }
}
