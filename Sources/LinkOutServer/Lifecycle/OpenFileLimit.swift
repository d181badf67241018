import Foundation
import Logging

/// Every connection is a descriptor, and the usual soft limit (1024) would cap the gateway far below what
/// it can hold: `raise` lifts it to the hard limit the system allows (at most 2^20) and says the result.
enum OpenFileLimit {
    static func raise(logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let target = min(limit.rlim_max, 1 << 20)
        if limit.rlim_cur < target {
            limit.rlim_cur = target
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
                logger.warning("cannot raise the open-file limit", metadata: ["limit": "\(limit.rlim_cur)"])
                return
            }
        }
        logger.info("open-file limit: \(limit.rlim_cur) descriptors (one per connection)")
    }
}
