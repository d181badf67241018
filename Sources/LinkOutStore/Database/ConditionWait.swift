import Foundation

extension NSCondition {
    /// Waits until signalled, or until `milliseconds` have passed on this machine: false when the time ran
    /// out. The one place a wait becomes a `Date`, the only form `NSCondition` takes; what the wait is for
    /// (a deadline, an interval) the caller counts on its clock's monotonic side, and this is only how long
    /// the thread sleeps meanwhile.
    @discardableResult
    package func wait(milliseconds: Int64) -> Bool {
        wait(until: Date(timeIntervalSinceNow: Double(milliseconds) / 1000))
    }
}
