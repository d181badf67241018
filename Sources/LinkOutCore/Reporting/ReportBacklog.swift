/// The reports waiting, the rate they are being cleared at, and whether at that rate the oldest waiting
/// token would be reported after Apple's day-10 reminder: nothing silent about a backlog (`report status`,
/// the dashboard's reporter panel, `linkout_reporting_backlog_*`, a warning in the log).
public struct ReportBacklog: Sendable, Equatable {
    /// Reports waiting to be sent (planned or due, in flight, or to be sent again).
    public var waiting: Int64
    /// Reports Apple answered for good (accepted or refused) per second over the last `windowMs`.
    public var ratePerSecond: Double
    /// How long the backlog takes at that rate; nil when nothing waits, or nothing was sent in the window.
    public var clearMs: Int64?
    /// Day 10 of the oldest waiting token (its creation plus 10 days), when one is known.
    public var day10At: Int64?

    public static let windowMs: Int64 = 300_000
    public static let day10Ms: Int64 = 10 * 86_400_000

    /// - Parameters:
    ///   - finishedInWindow: reports answered for good in the `windowMs` before `now`.
    ///   - oldestTokenCreatedAt: the creation (Unix ms) of the oldest token whose report waits.
    public init(waiting: Int64, finishedInWindow: Int64, oldestTokenCreatedAt: Int64?) {
        self.waiting = max(0, waiting)
        ratePerSecond = Double(max(0, finishedInWindow)) * 1000 / Double(Self.windowMs)
        clearMs = self.waiting > 0 && ratePerSecond > 0 ? Int64((Double(self.waiting) / ratePerSecond * 1000).rounded(.up)) : nil
        day10At = self.waiting > 0 ? oldestTokenCreatedAt.map { $0 + Self.day10Ms } : nil
    }

    /// Whether, at the current rate, the backlog clears after the oldest waiting token's day 10. Not said
    /// when nothing is being sent (reporting off, paused, or no `serve`): other warnings say that.
    public func passesDay10(now: Int64) -> Bool {
        guard let clearMs, let day10At else { return false }
        return now + clearMs > day10At
    }

    /// `1200 waiting, 35.2 a second, clear in 34s` for the status line and the log.
    public func text(now: Int64) -> String {
        var out = "\(waiting) waiting, " + Self.rate(ratePerSecond) + " a second over the last 5 minutes"
        if let clearMs { out += ", clear in " + Self.duration(clearMs) } else if waiting > 0 { out += ", none sent in the last 5 minutes" }
        if passesDay10(now: now), let day10At {
            out +=
                "; WARNING: at this rate the oldest waiting token's report goes after its day 10 (" + UTCDate.format(milliseconds: day10At)
                + ")"
        }
        return out
    }

    static func rate(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func duration(_ ms: Int64) -> String {
        let seconds = (ms + 999) / 1000
        if seconds < 120 { return "\(seconds)s" }
        if seconds < 7_200 { return "\((seconds + 59) / 60)m" }
        if seconds < 172_800 { return "\((seconds + 3_599) / 3_600)h" }
        return "\((seconds + 86_399) / 86_400)d"
    }
}
