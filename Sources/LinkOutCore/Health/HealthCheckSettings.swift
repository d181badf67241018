/// The `healthChecks` object of the config: how often destinations are checked, how long a check may take,
/// and how many results in a row change a destination's state.
///
/// Thresholds rather than single results, so one lost packet does not move shoppers and one lucky answer
/// does not bring back a destination that is still failing.
public struct HealthCheckSettings: Sendable, Equatable {
    /// Milliseconds between the starts of two checks of a target.
    public var intervalMs: Int = 5_000
    /// Milliseconds a whole check may take: DNS, connect, TLS and the answer's head.
    public var timeoutMs: Int = 2_000
    /// Consecutive failures that mark an up target down.
    public var downAfter: Int = 3
    /// Consecutive successes that mark a down target up again.
    public var upAfter: Int = 2
    /// A PEM bundle of CAs to verify destinations with instead of the system's (tests, private CAs).
    /// Verification is never off: a destination whose certificate fails it counts as down.
    public var caFile: String? = nil

    public init(
        intervalMs: Int = 5_000, timeoutMs: Int = 2_000, downAfter: Int = 3, upAfter: Int = 2, caFile: String? = nil
    ) {
        self.intervalMs = intervalMs
        self.timeoutMs = timeoutMs
        self.downAfter = downAfter
        self.upAfter = upAfter
        self.caFile = caFile
    }
}
