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
        /// Tokens whose report a sender holds now.
        public var sending: Int64 = 0
        /// Tokens whose report was sent and waits to be sent again: after Apple's failure (5xx, 429, no
        /// answer), a 401's pause, or a sender that stopped before Apple answered (`ReporterHealth.waiting`
        /// says which).
        public var retrying: Int64 = 0
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
    /// The outbox and the reporter's state, read from it.
    public var health = ReporterHealth()

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

/// The reporter as the outbox shows it, for `report status`, the dashboard and the metrics: what waits, why,
/// and when it is tried next. Read from the store, so every instance and command sees the same.
public struct ReporterHealth: Sendable, Equatable {
    /// Reports by state, with the rule of `SQLReportingStore.reportStateSQL`: planned and never sent, held by
    /// a sender now, waiting to be sent again, accepted, refused. `sending` and `retrying` equal the tokens'
    /// columns of the same names.
    public var toSend: Int64 = 0
    public var sending: Int64 = 0
    public var retrying: Int64 = 0
    public var accepted: Int64 = 0
    public var failed: Int64 = 0
    /// When Apple refused the key (401 or 403), nothing is sent until this time (Unix ms).
    public var pausedUntil: Int64?
    /// The soonest next try of a report not yet accepted or refused.
    public var nextTryAt: Int64?
    /// The latest answer of a report that waits to be sent again.
    public var lastError: LastError?
    /// Reports waiting to be sent again, soonest first (at most 20).
    public var waiting: [Waiting] = []
    /// Reports answered for good (accepted or refused) in the `ReportBacklog.windowMs` before `now`.
    public var finishedRecently: Int64 = 0
    /// The creation of the oldest token with an open report (Unix ms).
    public var oldestOpenTokenCreatedAt: Int64?
    /// The open reports, their rate of clearing and their day 10.
    public var backlog: ReportBacklog {
        ReportBacklog(waiting: open, finishedInWindow: finishedRecently, oldestTokenCreatedAt: oldestOpenTokenCreatedAt)
    }

    public struct LastError: Sendable, Equatable {
        public var answer: String
        public var at: Int64
        public var externalPurchaseId: String
    }

    public struct Waiting: Sendable, Equatable {
        public var requestIdentifier: String
        public var externalPurchaseId: String
        public var bundleId: String
        public var status: String
        /// Sends so far.
        public var attempts: Int64
        /// Apple's failures among them: what the backoff counts.
        public var failures: Int64
        /// Apple's HTTP status at the last send; nil when no answer came.
        public var lastStatus: Int64?
        public var lastAnswer: String
        public var lastAttemptAt: Int64?
        public var nextAttemptAt: Int64
    }

    /// Reports not yet accepted or refused.
    public var open: Int64 { toSend + sending + retrying }

    public init() {}
}
