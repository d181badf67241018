// `timespec` as the compiler sees it comes from Foundation's C module once another file of the target
// imports Foundation; without this, member-import visibility refuses `tv_sec` in a release build.
import CoreFoundation

#if canImport(Glibc)
import Glibc
#endif

/// The time, read one way for the whole product: Unix milliseconds for records, dates and reports, and the
/// monotonic clock for durations and deadlines. A value, so what reads the time can be handed a fixed or
/// stepped one in a test; `system` is this machine's clocks, read with `clock_gettime` (no Foundation, no
/// allocation: the request path reads it twice per request).
public struct TimeSource: Sendable {
    /// Unix time in milliseconds.
    public var nowMs: @Sendable () -> Int64
    /// Nanoseconds on a clock that never goes back (not the time of day).
    public var monotonicNanoseconds: @Sendable () -> UInt64

    public init(nowMs: @escaping @Sendable () -> Int64, monotonicNanoseconds: @escaping @Sendable () -> UInt64) {
        self.nowMs = nowMs
        self.monotonicNanoseconds = monotonicNanoseconds
    }

    /// Microseconds on the monotonic clock, for request durations.
    public func monotonicMicroseconds() -> Int64 { Int64(monotonicNanoseconds() / 1_000) }

    /// Milliseconds on the monotonic clock, for rate limits and deadlines.
    public func monotonicMilliseconds() -> Int64 { Int64(monotonicNanoseconds() / 1_000_000) }

    /// This machine's clocks: `CLOCK_REALTIME` and `CLOCK_MONOTONIC`.
    public static let system = TimeSource(
        nowMs: {
            var time = timespec()
            clock_gettime(CLOCK_REALTIME, &time)
            return Int64(time.tv_sec) * 1_000 + Int64(time.tv_nsec) / 1_000_000
        },
        monotonicNanoseconds: {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        })

    /// A clock stopped at `ms`, for tests; its monotonic clock stands still too.
    public static func fixed(_ ms: Int64) -> TimeSource {
        TimeSource(nowMs: { ms }, monotonicNanoseconds: { UInt64(ms) * 1_000_000 })
    }
}
