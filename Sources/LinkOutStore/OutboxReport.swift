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
