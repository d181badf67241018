/// The threshold logic for one target: turns a stream of check results into up/down transitions.
///
/// A value that returns what changed, with no clock and no I/O, so flapping and thresholds are tested
/// without a server. It starts up: a destination is trusted until checks prove otherwise, so a restart or
/// a newly configured destination never starts by moving shoppers away from it.
public struct HealthTracker: Sendable {
    /// A change of state, returned by `record(success:)` on the result that caused it.
    public enum Transition: Sendable, Equatable {
        case wentDown
        case cameUp
    }

    /// Consecutive failures that mark the target down (at least 1). Settable so a reload keeps the streak.
    public var downAfter: Int {
        didSet { downAfter = max(1, downAfter) }
    }
    /// Consecutive successes that mark it up again (at least 1).
    public var upAfter: Int {
        didSet { upAfter = max(1, upAfter) }
    }
    public private(set) var isUp = true
    /// The current run of results that disagree with the state (failures while up, successes while down).
    public private(set) var streak = 0

    public init(downAfter: Int, upAfter: Int) {
        self.downAfter = max(1, downAfter)
        self.upAfter = max(1, upAfter)
    }

    /// Records one check's result; the transition it caused, or nil.
    public mutating func record(success: Bool) -> Transition? {
        if success == isUp {
            // A result that agrees with the state breaks any run against it.
            streak = 0
            return nil
        }
        streak += 1
        if isUp, streak >= downAfter {
            isUp = false
            streak = 0
            return .wentDown
        }
        if !isUp, streak >= upAfter {
            isUp = true
            streak = 0
            return .cameUp
        }
        return nil
    }
}
