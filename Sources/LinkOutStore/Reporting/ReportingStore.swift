import LinkOutCore

/// The reporting side of the store: line items from the checkout, the tokens still to report, and the
/// outbox of reports to Apple with each one's answer. Opened on its own connection by each thread that
/// uses it (the API listener, the reporter, a command), never the writer's: a report never delays a
/// shopper's commit for longer than one short transaction.
public protocol ReportingStore: AnyObject {
    /// Brings the tokens recorded since the last call into reporting. Cheap when there are none.
    func syncTokens() throws

    /// What linkout knows of a token, or nil for an id it never recorded.
    func token(_ externalPurchaseId: String) throws -> ExternalPurchaseToken?

    /// Which of `ids` a visit or a registration recorded already (not counting tokens known only from
    /// Apple's notifications), so that a registration sent again answers `unchanged` and adds nothing.
    func recordedTokens(_ ids: [String]) throws -> Set<String>

    /// In one transaction: reads the lines `decide` needs to judge `submission` (those of the same token,
    /// and those of the same app with the same ids), lets it decide, and stores what it accepts. A line
    /// whose id and content are already stored changes nothing.
    func storeLineItems(
        externalPurchaseId: String, lineItemIds: [String], now: Int64,
        _ decide: (ExternalPurchaseToken, [LineItemRow]) throws -> [LineItemWrite]
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

    /// Counts for `report status` and the metrics. Reads every token: seconds on a large store.
    func status(now: Int64, noPurchaseAfterMs: Int64, gatherMs: Int64) throws -> ReportStatusSummary

    /// The outbox's counts and the reporter's state (a 401's pause, the last error, the next try, the
    /// reports waiting to be sent again): cheap, from the open reports only.
    func health(now: Int64, waitingLimit: Int) throws -> ReporterHealth

    /// Reports Apple refused that still stand for their tokens, newest first, with Apple's answer.
    func failedReports(limit: Int) throws -> [FailedReport]

    /// How many refused reports still stand for their tokens, and the months (UTC) their production tokens hold open.
    func refusedCount() throws -> (count: Int64, months: [UTCMonth])

    /// How far Apple's notification history has been read, per app and environment.
    func notificationHistoryMarks() throws -> [NotificationHistoryMark]

    /// Apple's notification history has been read and taken up to `coveredUntil` for the app and environment.
    func markNotificationHistory(bundleId: String, environment: TokenEnvironment, coveredUntil: Int64, now: Int64) throws

    /// Puts the selected refused reports back in the outbox, due at `now`, unchanged and with the same
    /// requestIdentifier (Apple took nothing of a refused report): `linkout report retry`.
    func retryRefused(_ selection: RefusedSelection, now: Int64) throws -> RefusedRetry

    /// How many reports Apple accepted, of tokens created within `tokensCreated` (Unix ms; nil: all).
    func countAcceptedReports(tokensCreated: Range<Int64>?) throws -> Int

    /// The accepted reports of tokens created within `tokensCreated`, with the body sent, by
    /// `requestIdentifier`: up to `limit` after `after` (nil: from the first), a page at a time.
    func acceptedReports(tokensCreated: Range<Int64>?, after: String?, limit: Int) throws -> [AcceptedReport]

    /// `count` of those reports chosen at random (all of them when there are fewer).
    func sampleAcceptedReports(tokensCreated: Range<Int64>?, count: Int) throws -> [AcceptedReport]

    /// In one transaction: keeps a verified notification (once per notificationUUID) and acts on it
    /// (`NotificationAction`): a known token's report due now, an unknown one recorded to be reported
    /// `UNRECOGNIZED_TOKEN`, a custom-link token recorded. Returns `.duplicate` for a notification already kept.
    func recordNotification(_ notification: VerifiedNotification, now: Int64) throws -> NotificationOutcome

    /// Runs `body` on the payment providers' events in one transaction (`ProviderLedger`).
    func withProviderLedger<Result>(_ body: (any ProviderLedger) throws -> Result) throws -> Result

    /// The providers' events by provider and outcome, and the newest open ones, for `report status`.
    func providerEventCounts(limit: Int) throws -> ProviderEventCounts

    /// The notifications kept, newest first.
    func recentNotifications(limit: Int) throws -> [StoredNotification]

    /// A month's tokens and line items, for `MonthlyStatement` (SQLReportingStore+Statement).
    func statementTokens(_ month: UTCMonth, bundleId: String?) throws -> [MonthlyStatement.TokenCount]
    func statementLines(_ month: UTCMonth, bundleId: String?) throws -> [MonthlyStatement.SoldLine]
    func statementTaps(_ month: UTCMonth) throws -> [MonthlyStatement.TapCount]

    /// Every month's tokens against those with an accepted report, for `MonthClose`.
    func monthCounts() throws -> [MonthClose.Count]
}
