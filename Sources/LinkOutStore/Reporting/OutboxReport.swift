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

    public init(
        requestIdentifier: String, externalPurchaseId: String, bundleId: String, environment: TokenEnvironment,
        status: String, body: String, attempts: Int, failures: Int = 0
    ) {
        self.requestIdentifier = requestIdentifier
        self.externalPurchaseId = externalPurchaseId
        self.bundleId = bundleId
        self.environment = environment
        self.status = status
        self.body = body
        self.attempts = attempts
        self.failures = failures
    }
}

/// How one send ended, for the store.
public enum ReportOutcome: Sendable, Equatable {
    case accepted(answer: String)
    /// Apple refused the report's content: kept with Apple's errors, not sent again.
    case failed(answer: String)
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

public struct FailedReport: Sendable, Equatable {
    public var requestIdentifier: String
    public var externalPurchaseId: String
    public var bundleId: String
    public var status: String
    public var answer: String
    public var finishedAt: Int64
}
