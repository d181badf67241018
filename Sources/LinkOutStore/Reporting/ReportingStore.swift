import LinkOutCore

// The reporting side of the store, as its users see it: line items from the checkout, the tokens still to
// report, the outbox of reports to Apple with each one's answer, Apple's notifications and the payment
// providers' events. Opened on its own connection by each thread that uses it (the API listener, the
// reporter, a command), never the writer's: a report never delays a shopper's commit for longer than one
// short transaction.
//
// Each protocol is what one kind of user does with the store, and each user asks for only what it uses;
// `SQLReportingStore` is all of them (one extension file each, named after it).

/// The code that opens a store and hands it to its users (`openReportingStore`, serve's parts, the
/// commands): every side of reporting at once.
public typealias ReportingStore = LineItemStore & RecordedTokenStore & OutboxStore & ReportStatusStore & StatementStore
    & AcceptedReportStore & NotificationStore & ProviderLedgerStore

/// Stores the checkout's line items: `LineItemIntake` (`POST /v1/line-items`, `linkout transactions import`).
/// A payment provider's lines take the same code inside the ledger's transaction (`ProviderLedger`).
/// (SQLReportingStore+LineItems)
public protocol LineItemStore: AnyObject {
    /// In one transaction: reads the lines `decide` needs to judge `submission` (those of the same token,
    /// and those of the same app with the same ids), lets it decide, and stores what it accepts. A line
    /// whose id and content are already stored changes nothing.
    func storeLineItems(
        externalPurchaseId: String, lineItemIds: [String], now: Int64,
        _ decide: (ExternalPurchaseToken, [LineItemRow]) throws -> [LineItemWrite]
    ) throws -> LineItemStoreResult
}

/// Tells a token registered before: `TokenRegistrationIntake` (`POST /v1/tokens`, `linkout tokens import`).
/// (SQLReportingStore+RecordedTokens)
public protocol RecordedTokenStore: AnyObject {
    /// Which of `ids` a visit or a registration recorded already (not counting tokens known only from
    /// Apple's notifications), so that a registration sent again answers `unchanged` and adds nothing.
    func recordedTokens(_ ids: [String]) throws -> Set<String>
}

/// The outbox, as the reporter works it (`Reporter`: plan, claim, send, settle, and its pause after a 401)
/// and `linkout report retry` puts refused reports back in it. (SQLReportingStore+Outbox, +Refused)
public protocol OutboxStore: AnyObject {
    /// Puts what is due at `now` in the outbox: a `LINE_ITEM` report for each token whose new or changed
    /// lines have waited `gatherMs`, `NO_LINE_ITEM` for each token with none `noPurchaseAfterMs` after its
    /// creation. One open report per token at a time. Returns how many reports it made.
    func planReports(now: Int64, noPurchaseAfterMs: Int64, gatherMs: Int64) throws -> Int

    /// Takes up to `limit` reports that are due (or whose sender's lease ran out), leasing them for `leaseMs`
    /// so no other sender takes them meanwhile.
    func claimReports(now: Int64, leaseMs: Int64, limit: Int) throws -> [OutboxReport]

    /// Records the outcome of a send.
    func finish(_ report: OutboxReport, _ outcome: ReportOutcome, now: Int64) throws

    /// Records the outcomes of many sends in one transaction: each as `finish(_:_:now:)` would, all or none.
    func finish(_ finishes: [ReportFinish]) throws

    /// The outbox's counts and the reporter's state (a 401's pause, the last error, the next try, the
    /// reports waiting to be sent again): cheap, from the open reports only.
    func health(now: Int64, waitingLimit: Int) throws -> ReporterHealth

    /// Puts the selected refused reports back in the outbox, due at `now`, unchanged and with the same
    /// requestIdentifier (Apple took nothing of a refused report): `linkout report retry`.
    func retryRefused(_ selection: RefusedSelection, now: Int64) throws -> RefusedRetry
}

/// Where reporting stands: `linkout report status`, the reporting gauges and the watch while reporting is
/// off (`ReportingStatusGauges`, `ReportingOffWatch`), and the dashboard. (SQLReportingStore+ReportStatus,
/// +Refused, +TokenSync)
public protocol ReportStatusStore: AnyObject {
    /// Brings the tokens recorded since the last call into reporting. Cheap when there are none.
    func syncTokens() throws

    /// Counts for `report status` and the metrics. Reads every token: seconds on a large store.
    func status(now: Int64, noPurchaseAfterMs: Int64, gatherMs: Int64) throws -> ReportStatusSummary

    /// Reports Apple refused that still stand for their tokens, newest first, with Apple's answer.
    func failedReports(limit: Int) throws -> [FailedReport]

    /// How many refused reports still stand for their tokens, and the months (UTC) their production tokens hold open.
    func refusedCount() throws -> (count: Int64, months: [UTCMonth])

    /// Every month's tokens against those with an accepted report, for `MonthClose`.
    func monthCounts() throws -> [MonthClose.Count]
}

/// What is owed: `linkout statement` and the dashboard's statement. (SQLReportingStore+Statement)
public protocol StatementStore: AnyObject {
    /// A month's tokens, line items and taps, for `MonthlyStatement`.
    func statementTokens(_ month: UTCMonth, bundleId: String?) throws -> [MonthlyStatement.TokenCount]
    func statementLines(_ month: UTCMonth, bundleId: String?) throws -> [MonthlyStatement.SoldLine]
    func statementTaps(_ month: UTCMonth) throws -> [MonthlyStatement.TapCount]
}

/// The accepted reports, read back to compare with Apple's copy: `ReportVerifier` (`linkout report verify`).
/// (SQLReportingStore+AcceptedReports)
public protocol AcceptedReportStore: AnyObject {
    /// How many reports Apple accepted, of tokens created within `tokensCreated` (Unix ms; nil: all).
    func countAcceptedReports(tokensCreated: Range<Int64>?) throws -> Int

    /// The accepted reports of tokens created within `tokensCreated`, with the body sent, by
    /// `requestIdentifier`: up to `limit` after `after` (nil: from the first), a page at a time.
    func acceptedReports(tokensCreated: Range<Int64>?, after: String?, limit: Int) throws -> [AcceptedReport]

    /// `count` of those reports chosen at random (all of them when there are fewer).
    func sampleAcceptedReports(tokensCreated: Range<Int64>?, count: Int) throws -> [AcceptedReport]
}

/// Apple's notifications: kept and acted on by `NotificationTaker` (for `NotificationIntake` and
/// `NotificationHistoryFetcher`), the history's marks read and moved by the fetcher, and both read by
/// `linkout report status`. (SQLReportingStore+Notifications, +NotificationHistory)
public protocol NotificationStore: AnyObject {
    /// In one transaction: keeps a verified notification (once per notificationUUID) and acts on it
    /// (`NotificationAction`): a known token's report due now, an unknown one recorded to be reported
    /// `UNRECOGNIZED_TOKEN`, a custom-link token recorded. Returns `.duplicate` for a notification already kept.
    func recordNotification(_ notification: VerifiedNotification, now: Int64) throws -> NotificationOutcome

    /// The notifications kept, newest first.
    func recentNotifications(limit: Int) throws -> [StoredNotification]

    /// How far Apple's notification history has been read, per app and environment.
    func notificationHistoryMarks() throws -> [NotificationHistoryMark]

    /// Apple's notification history has been read and taken up to `coveredUntil` for the app and environment.
    func markNotificationHistory(bundleId: String, environment: TokenEnvironment, coveredUntil: Int64, now: Int64) throws
}

/// The payment providers' ledger: their events taken by `PaymentIntake` (through `ProviderEventApplier`),
/// and counted for `linkout report status` and the dashboard. (SQLReportingStore+Providers)
public protocol ProviderLedgerStore: AnyObject {
    /// Runs `body` on the payment providers' events in one transaction (`ProviderLedger`).
    func withProviderLedger<Result>(_ body: (any ProviderLedger) throws -> Result) throws -> Result

    /// The providers' events by provider and outcome, and the newest open ones, for `report status`.
    func providerEventCounts(limit: Int) throws -> ProviderEventCounts
}
