import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// Logs a valid token arriving on a path no link serves: once per path per minute (`LogThrottle`), so an
/// Info.plist pointing at the wrong path is seen at once without a line per shopper. Shared by every loop
/// thread behind a lock held for a dictionary look-up only; at most 1,024 paths are followed at a time
/// (beyond that, one line a minute says how many arrivals on other paths went unlogged).
final class UnroutedLog: @unchecked Sendable {
    private let logger: Logger
    private let throttle = Locked(LogThrottle())

    init(logger: Logger) {
        self.logger = logger
    }

    /// - Parameters:
    ///   - path: sanitised (`UnroutedPath`), so safe to log.
    ///   - link: the link the shopper was sent on through (`unrouted.redirectTo`), nil when answered 404.
    func note(path: String, link: String?, nowMs: Int64) {
        switch throttle.withLock({ $0.admit(path, nowMs: nowMs) }) {
        case .suppress:
            return
        case .logOverflow(let count):
            logger.warning(
                "valid tokens arrived on more paths no link serves than the log follows: \(count) of them went unlogged since the last such line (check the app's Info.plist URLs)"
            )
        case .log:
            var metadata: Logger.Metadata = ["path": "\(path)"]
            if let link { metadata["redirectTo"] = "\(link)" }
            logger.warning(
                "a valid token arrived on a path no link serves; recorded as link 'unrouted' (check the app's Info.plist URLs)",
                metadata: metadata)
        }
    }
}
