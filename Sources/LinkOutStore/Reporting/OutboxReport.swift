import LinkOutCore

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
    /// Apple's failures of this report before this send (5xx, 429, no answer): what its backoff counts. A
    /// send whose sender stopped before Apple answered (its lease ran out) is an attempt, not a failure.
    public var failures: Int
    /// Apple's refusals of this report before this send (400s that are not a duplicate): what the wait
    /// before its next automatic retry counts (`RefusalRetry`).
    public var refusals: Int

    public init(
        requestIdentifier: String, externalPurchaseId: String, bundleId: String, environment: TokenEnvironment,
        status: String, body: String, attempts: Int, failures: Int = 0, refusals: Int = 0
    ) {
        self.requestIdentifier = requestIdentifier
        self.externalPurchaseId = externalPurchaseId
        self.bundleId = bundleId
        self.environment = environment
        self.status = status
        self.body = body
        self.attempts = attempts
        self.failures = failures
        self.refusals = refusals
    }
}

/// One send's outcome, to be recorded with others in one transaction (`OutboxStore.finish(_:)`).
public struct ReportFinish: Sendable, Equatable {
    public var report: OutboxReport
    public var outcome: ReportOutcome
    /// When the answer came (Unix ms).
    public var now: Int64
    public init(_ report: OutboxReport, _ outcome: ReportOutcome, now: Int64) {
        self.report = report
        self.outcome = outcome
        self.now = now
    }
}

/// How one send ended, for the store.
public enum ReportOutcome: Sendable, Equatable {
    case accepted(answer: String)
    /// Apple refused the report (a 400 that is not a duplicate): kept with Apple's errors. Sent again, unchanged
    /// and with the same requestIdentifier, at `retryAt` when the refusal may be Apple's state
    /// (`RefusalRetry`); with nil, only a restatement of its lines or `linkout report retry` sends it again.
    case failed(answer: String, retryAt: Int64?)
    /// Apple did not take it this time (5xx, 429, no answer in time, a duplicate it could not return): sent
    /// again, with the same requestIdentifier, at `nextAttemptAt`. Counts as one of the report's failures.
    /// `status`: Apple's HTTP status, nil when none came.
    case retry(nextAttemptAt: Int64, answer: String, status: Int?)
    /// Apple refused the key (401, 403): nothing is the report's fault, and nothing is sent until
    /// `nextAttemptAt`, when the reporter's pause ends. Not one of the report's failures.
    case unauthorized(nextAttemptAt: Int64, answer: String, status: Int)
    /// Taken but never sent (the reporter paused meanwhile): as if it had not been taken, but not before
    /// `nextAttemptAt`.
    case notSent(nextAttemptAt: Int64)
}

/// A report Apple refused that still stands for its token: nothing later was planned for the token (its
/// lines did not change since), so the token is reported only if this one is sent again.
public struct FailedReport: Sendable, Equatable {
    public var requestIdentifier: String
    public var externalPurchaseId: String
    public var bundleId: String
    public var status: String
    public var answer: String
    public var finishedAt: Int64
    /// Apple's refusals of it so far.
    public var refusals: Int64 = 1
    /// When the reporter sends it again on its own; nil: only `linkout report retry` or a restatement does.
    public var retryAt: Int64?
    /// The month (UTC) its token was created in: the month it holds open.
    public var month: UTCMonth
    public var environment: TokenEnvironment = .production
}

/// Which refused reports `linkout report retry` sends again.
public enum RefusedSelection: Sendable, Equatable {
    case report(requestIdentifier: String)
    case all
    /// Those of tokens created in the month (UTC), as month close counts them.
    case month(UTCMonth)
}

/// What `linkout report retry` did.
public struct RefusedRetry: Sendable, Equatable {
    /// The reports put back in the outbox, due now, with their own requestIdentifier.
    public var requeued: [String] = []
    /// Refused reports the selection named that no longer stand for their token (a later report carries
    /// its lines), or that are not refused: nothing to send again.
    public var notRefused: [String] = []
    public init() {}
}
