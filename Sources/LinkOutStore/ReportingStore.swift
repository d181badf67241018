import LinkOutCore

/// The reporting side of the store: line items from the checkout, the tokens still to report, and the
/// outbox of reports to Apple with each one's answer. Opened on its own connection by each thread that
/// uses it (the API listener, the reporter, a command), never the writer's: a report never delays a
/// shopper's commit for longer than one short transaction.
public protocol ReportingStore: AnyObject {
    /// Brings the tokens recorded since the last call into reporting. Cheap when there are none.
    func syncTokens() throws

    /// What linkout knows of a token, or nil for an id it never recorded.
    func token(_ externalPurchaseId: String) throws -> ReportableToken?

    /// In one transaction: reads the lines `decide` needs to judge `submission` (those of the same token,
    /// and those of the same app with the same ids), lets it decide, and stores what it accepts. A line
    /// whose id and content are already stored changes nothing.
    func storeLineItems(
        externalPurchaseId: String, lineItemIds: [String], now: Int64,
        _ decide: (ReportableToken, [LineItemRow]) throws -> [LineItemWrite]
    ) throws -> LineItemStoreResult

    /// Puts what is due at `now` in the outbox: a `LINE_ITEM` report for each token whose new or changed
    /// lines have waited `gatherMs`, `NO_LINE_ITEM` for each token with none `noPurchaseAfterMs` after its
    /// creation. One open report per token at a time. Returns how many reports it made.
    func planReports(now: Int64, noPurchaseAfterMs: Int64, gatherMs: Int64) throws -> Int

    /// Takes up to `limit` reports that are due (or whose sender's lease ran out), leasing them for `leaseMs`
    /// so no other sender takes them meanwhile.
    func claimReports(now: Int64, leaseMs: Int64, limit: Int) throws -> [OutboxReport]

    /// Records the outcome of a send.
    func finish(_ report: OutboxReport, _ outcome: ReportOutcome, now: Int64) throws

    /// Counts for `report status` and the metrics.
    func status(now: Int64, noPurchaseAfterMs: Int64) throws -> ReportStatusSummary

    /// Reports that failed, newest first, with Apple's answer.
    func failedReports(limit: Int) throws -> [FailedReport]

    /// In one transaction: keeps a verified notification (once per notificationUUID) and acts on it
    /// (`NotificationAction`): a known token's report due now, an unknown one recorded to be reported
    /// `UNRECOGNIZED_TOKEN`, a custom-link token recorded. Returns `.duplicate` for a notification already kept.
    func recordNotification(_ notification: VerifiedNotification, now: Int64) throws -> NotificationOutcome

    /// The notifications kept, newest first.
    func recentNotifications(limit: Int) throws -> [StoredNotification]
}

/// A notification as kept.
public struct StoredNotification: Sendable, Equatable {
    public var notificationUUID: String
    public var notificationType: String
    public var subtype: String?
    public var signedDate: Int64
    public var externalPurchaseId: String?
    public var environment: String
    public var outcome: String
    public var receivedAt: Int64
}

/// A token as reporting sees it.
public struct ReportableToken: Sendable, Equatable {
    public var externalPurchaseId: String
    public var bundleId: String
    public var appAppleId: Int64
    public var environment: TokenEnvironment
    public var tokenCreationDate: Int64
    public var tokenType: String?
    public var tokenExpirationDate: Int64?

    public init(
        externalPurchaseId: String, bundleId: String, appAppleId: Int64, tokenCreationDate: Int64,
        tokenType: String? = nil, tokenExpirationDate: Int64? = nil
    ) {
        self.externalPurchaseId = externalPurchaseId
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = TokenEnvironment(externalPurchaseId: externalPurchaseId)
        self.tokenCreationDate = tokenCreationDate
        self.tokenType = tokenType
        self.tokenExpirationDate = tokenExpirationDate
    }
}

/// A line item as stored: its JSON as the checkout sent it, the token it belongs to, its revision (1, then
/// one more per restatement) and the revision Apple accepted (0: none yet).
public struct LineItemRow: Sendable, Equatable {
    public var lineItemId: String
    public var externalPurchaseId: String
    public var json: String
    public var revision: Int64
    public var acceptedRevision: Int64

    public init(lineItemId: String, externalPurchaseId: String, json: String, revision: Int64, acceptedRevision: Int64) {
        self.lineItemId = lineItemId
        self.externalPurchaseId = externalPurchaseId
        self.json = json
        self.revision = revision
        self.acceptedRevision = acceptedRevision
    }
}

/// A line to store: new, or replacing the stored line of the same id (a restatement).
public struct LineItemWrite: Sendable, Equatable {
    public var lineItemId: String
    public var json: String

    public init(lineItemId: String, json: String) {
        self.lineItemId = lineItemId
        self.json = json
    }
}

public struct LineItemStoreResult: Sendable, Equatable {
    /// Lines stored for the first time, and lines replaced.
    public var added: [String] = []
    public var restated: [String] = []
    /// Lines sent again exactly as stored: nothing changed.
    public var unchanged: [String] = []

    public init() {}
}

/// A report in the outbox, leased to one sender.
public struct OutboxReport: Sendable, Equatable {
    public var requestIdentifier: String
    public var externalPurchaseId: String
    public var bundleId: String
    public var environment: TokenEnvironment
    public var status: String
    public var body: String
    /// Sends made so far, this one included.
    public var attempts: Int

    public init(
        requestIdentifier: String, externalPurchaseId: String, bundleId: String, environment: TokenEnvironment,
        status: String, body: String, attempts: Int
    ) {
        self.requestIdentifier = requestIdentifier
        self.externalPurchaseId = externalPurchaseId
        self.bundleId = bundleId
        self.environment = environment
        self.status = status
        self.body = body
        self.attempts = attempts
    }
}

/// How one send ended, for the store.
public enum ReportOutcome: Sendable, Equatable {
    case accepted(answer: String)
    /// Apple refused the report's content: kept with Apple's errors, not sent again.
    case failed(answer: String)
    /// Try again (the same requestIdentifier) at `nextAttemptAt`.
    case retry(nextAttemptAt: Int64, answer: String)
}

public struct FailedReport: Sendable, Equatable {
    public var requestIdentifier: String
    public var externalPurchaseId: String
    public var bundleId: String
    public var status: String
    public var answer: String
    public var finishedAt: Int64
}

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
