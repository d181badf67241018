import LinkOutCore

/// Where reporting stands, by app and environment.
public struct ReportStatusSummary: Sendable, Equatable {
    public struct Row: Sendable, Equatable {
        public var bundleId: String
        public var environment: String
        /// Tokens with no accepted report whose time has not come (no line items and still inside the
        /// no-purchase window).
        public var waiting: Int64 = 0
        /// Tokens whose report is due or planned and not yet sent.
        public var due: Int64 = 0
        /// Tokens whose report is being sent or awaits a retry after an error.
        public var sending: Int64 = 0
        /// Tokens Apple accepted a report for.
        public var reported: Int64 = 0
        /// Tokens whose last report Apple refused.
        public var failed: Int64 = 0
        /// Tokens older than 7 and 10 days without an accepted report: day 10 is Apple's reminder.
        public var unreportedPastDay7: Int64 = 0
        public var unreportedPastDay10: Int64 = 0

        public init(bundleId: String, environment: String) {
            self.bundleId = bundleId
            self.environment = environment
        }
    }

    public var rows: [Row] = []
    /// Reports by outbox state: pending, sending, accepted, failed.
    public var reports: [String: Int64] = [:]

    public struct NotificationCount: Sendable, Equatable {
        public var type: String
        /// "" when Apple sent none.
        public var subtype: String
        public var outcome: String
        public var count: Int64
    }

    /// Apple's notifications kept, by type, subtype and what linkout did.
    public var notifications: [NotificationCount] = []
    /// Tokens Apple's UNREPORTED named before linkout had a report of them accepted.
    public var reminded: Int64 = 0

    public init() {}
}
