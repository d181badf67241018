import LinkOutCore

/// A report Apple accepted, as the outbox keeps it: the body linkout sent, for `report verify` to compare
/// with Apple's copy.
public struct AcceptedReport: Sendable, Equatable {
    public var report: OutboxReport
    /// The token's `tokenCreationDate` (Unix ms): what `--month` selects by.
    public var tokenCreationDate: Int64
    /// When Apple's acceptance was recorded (Unix ms).
    public var acceptedAt: Int64

    public init(report: OutboxReport, tokenCreationDate: Int64, acceptedAt: Int64) {
        self.report = report
        self.tokenCreationDate = tokenCreationDate
        self.acceptedAt = acceptedAt
    }
}
