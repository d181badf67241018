/// Whether every token created in a month (UTC) has a report Apple accepted, by the deadline: Apple's
/// reports are monthly, due within `reporting.monthCloseDay` days after the month ends (15 by default). A
/// month is closed when none of its tokens is outstanding. Sandbox tokens have no deadline (they are
/// reported, to Apple's sandbox, but owe nothing): they are left out, as from the monthly statement.
public enum MonthClose {
    /// A month's tokens as the store counts them.
    public struct Count: Sendable, Equatable {
        public var month: UTCMonth
        public var tokens: Int64
        /// Those with an accepted report.
        public var reported: Int64
        public var environment: TokenEnvironment

        public init(month: UTCMonth, tokens: Int64, reported: Int64, environment: TokenEnvironment = .production) {
            self.month = month
            self.tokens = tokens
            self.reported = reported
            self.environment = environment
        }
    }

    public struct State: Sendable, Equatable {
        public var month: UTCMonth
        public var tokens: Int64
        public var reported: Int64
        public var outstanding: Int64 { tokens - reported }
        /// The end of day `closeDay` of the next month (UTC, Unix ms): the first instant past the deadline.
        public var deadline: Int64
        /// Whole days from now to the deadline, rounded up; 0 or less once it has passed.
        public var daysLeft: Int64
        public var closed: Bool { outstanding == 0 }
        /// Outstanding tokens within `warningDays` of the deadline, or past it.
        public var atRisk: Bool { !closed && daysLeft <= MonthClose.warningDays }
    }

    /// A month with tokens outstanding this close to its deadline is said in the log, daily.
    public static let warningDays: Int64 = 3
    public static let defaultCloseDay: Int64 = 15

    /// How long after a month's end Apple's notification history must have been read for the month's
    /// count to hold every token Apple knows of: a token linkout never saw (its shopper's browser failed
    /// before the link) reaches it only as an `UNREPORTED` notification, 10 days after the token's
    /// creation, so the month's last day's tokens are told of by day 10 of the next month.
    public static let unreportedNoticeMs: Int64 = 10 * 86_400_000

    /// Whether Apple's notification history, read up to `historyReadUntil` (Unix ms), has passed the day
    /// its `UNREPORTED` notices for every token of `month` were due: until then a month closed by linkout's
    /// count may still gain a token it never saw.
    public static func historyCovers(_ month: UTCMonth, historyReadUntil: Int64) -> Bool {
        historyReadUntil >= month.end + unreportedNoticeMs
    }

    public static func states(_ counts: [Count], closeDay: Int64, now: Int64) -> [State] {
        counts.filter { $0.environment == .production }.map { count in
            let deadline = count.month.next.day(closeDay + 1)
            let remaining = deadline - now
            let days = remaining > 0 ? (remaining + 86_399_999) / 86_400_000 : remaining / 86_400_000
            return State(month: count.month, tokens: count.tokens, reported: count.reported, deadline: deadline, daysLeft: days)
        }
    }
}
