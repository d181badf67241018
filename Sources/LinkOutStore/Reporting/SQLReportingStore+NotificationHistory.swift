import LinkOutCore

/// How far Apple's notification history has been read, per app and environment: the next fetch starts
/// there (`NotificationHistory.span`), so a gap while linkout was down is asked for at the next start.
extension SQLReportingStore {
    public func notificationHistoryMarks() throws -> [NotificationHistoryMark] {
        var marks: [NotificationHistoryMark] = []
        try database.query(
            """
            SELECT bundle_id, environment, covered_until, checked_at FROM notification_history ORDER BY bundle_id, environment
            """, []
        ) { row in
            marks.append(
                NotificationHistoryMark(
                    bundleId: try row.text(0), environment: TokenEnvironment(rawValue: try row.text(1)) ?? .production,
                    coveredUntil: try row.int64(2), checkedAt: try row.int64(3)))
        }
        return marks
    }

    /// After every page of a span was read and taken: the span is covered. Never moves back (two
    /// instances may fetch at once).
    public func markNotificationHistory(bundleId: String, environment: TokenEnvironment, coveredUntil: Int64, now: Int64) throws {
        try database.query(
            """
            INSERT INTO notification_history (bundle_id, environment, covered_until, checked_at) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (bundle_id, environment) DO UPDATE SET
                covered_until = CASE WHEN excluded.covered_until > notification_history.covered_until
                    THEN excluded.covered_until ELSE notification_history.covered_until END,
                checked_at = excluded.checked_at
            """, [.text(bundleId), .text(environment.rawValue), .integer(coveredUntil), .integer(now)])
    }
}

/// One app's and environment's reading of Apple's notification history.
public struct NotificationHistoryMark: Sendable, Equatable {
    public var bundleId: String
    public var environment: TokenEnvironment
    /// Every notification Apple recorded before this (Unix ms) has been read and taken.
    public var coveredUntil: Int64
    /// When it was last read.
    public var checkedAt: Int64
}
