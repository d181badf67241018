import Foundation
import LinkOutStore
import Logging

/// Logs a valid token arriving on a path no link serves: once per path per minute, so an Info.plist
/// pointing at the wrong path is seen at once without a line per shopper. Shared by every loop thread
/// behind a lock held for a dictionary look-up only; at most `maxPaths` paths are remembered (beyond that,
/// the oldest entries are forgotten, which can only make a path log again early).
final class UnroutedLog: @unchecked Sendable {
    static let maxPaths = 1024
    private let logger: Logger
    /// When each path was last logged.
    private let lastLogged = Locked<[String: Int64]>([:])

    init(logger: Logger) {
        self.logger = logger
    }

    /// - Parameters:
    ///   - path: sanitised (`UnroutedPath`), so safe to log.
    ///   - link: the link the shopper was sent on through (`unrouted.redirectTo`), nil when answered 404.
    func note(path: String, link: String?, nowMs: Int64) {
        let due: Bool = lastLogged.withLock { logged in
            if let last = logged[path], nowMs - last < 60_000 { return false }
            if logged.count >= Self.maxPaths {
                logged = logged.filter { nowMs - $0.value < 60_000 }
                if logged.count >= Self.maxPaths { logged.removeAll(keepingCapacity: true) }
            }
            logged[path] = nowMs
            return true
        }
        guard due else { return }
        var metadata: Logger.Metadata = ["path": "\(path)"]
        if let link { metadata["redirectTo"] = "\(link)" }
        logger.warning(
            "a valid token arrived on a path no link serves; recorded as link 'unrouted' (check the app's Info.plist URLs)",
            metadata: metadata)
    }
}
