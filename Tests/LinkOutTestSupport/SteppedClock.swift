import Foundation
import LinkOutCore

/// A clock a test moves instead of sleeping: `SteppedClock(.fixed(ms))` stands still until `advance`
/// moves both its sides; `SteppedClock(.system)` runs with this machine's clocks, moved on by what was
/// advanced, for code that also waits in real time (a condition's timeout) while the test jumps ahead.
/// Hand `source` to what reads the time.
package final class SteppedClock: @unchecked Sendable {
    private let base: TimeSource
    private let lock = NSLock()
    private var advancedMs: Int64 = 0

    package init(_ base: TimeSource) {
        self.base = base
    }

    /// Moves the time of day and the monotonic clock on together.
    package func advance(ms: Int64) {
        lock.withLock { advancedMs += ms }
    }

    package var source: TimeSource {
        TimeSource(
            nowMs: { [self] in base.nowMs() + lock.withLock { advancedMs } },
            monotonicNanoseconds: { [self] in base.monotonicNanoseconds() + UInt64(lock.withLock { advancedMs }) * 1_000_000 })
    }
}
