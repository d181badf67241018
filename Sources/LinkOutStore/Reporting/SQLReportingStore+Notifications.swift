import LinkOutCore

/// Apple's notifications (`NotificationStore`), kept once each and acted on. How far Apple's history was
/// read: SQLReportingStore+NotificationHistory.
extension SQLReportingStore: NotificationStore {
    public func recordNotification(_ notification: VerifiedNotification, now: Int64) throws -> NotificationOutcome {
        // A token a visit recorded must be in report_tokens before the notification is judged against it:
        // catch up first in short transactions, then, in SQLite, the last few visits inside this one (which
        // holds the write lock), so that a visit committed meanwhile cannot be taken for an unknown token.
        try syncTokens()
        return try database.transaction {
            if let sqlite = database as? SQLiteConnection { while try syncChunk(sqlite) {} }
            var inserted = false
            try database.query(
                """
                INSERT INTO notifications (uuid, type, subtype, signed_date, external_purchase_id, environment, outcome, received_at, payload)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'stored', ?7, ?8)
                ON CONFLICT (uuid) DO NOTHING RETURNING uuid
                """,
                [
                    .text(notification.notificationUUID), .text(notification.notificationType), .text(notification.subtype),
                    .integer(notification.signedDate), .text(notification.token?.externalPurchaseId),
                    .text(notification.environment.rawValue), .integer(now), .text(notification.payloadJSON),
                ]
            ) { _ in inserted = true }
            // Apple's retry of a notification already taken (or two instances given the same one): one effect.
            guard inserted else { return .duplicate }
            let outcome: NotificationOutcome
            switch notification.action {
            case .keepOnly:
                outcome = .stored
            case .reportNow(let token):
                var known: (accepted: Bool, blocked: Bool)?
                try database.query(
                    """
                    SELECT accepted_status, blocked FROM report_tokens WHERE external_purchase_id = ?1 \(database.forUpdate)
                    """, [.text(token.externalPurchaseId)]
                ) { row in known = (try row.optionalText(0) != nil, try row.int64(1) == 1) }
                if let known {
                    try database.query(
                        """
                        UPDATE report_tokens SET due_now = 1, reminded = CASE WHEN accepted_status IS NULL THEN 1 ELSE reminded END
                        WHERE external_purchase_id = ?1
                        """, [.text(token.externalPurchaseId)])
                    outcome = known.accepted ? .alreadyReported : known.blocked ? .reportBlocked : .reportDue
                } else {
                    try insertToken(token, learntFrom: "notification", dueNow: true)
                    outcome = .unrecognized
                }
            case .recordCustomLinkToken(let token):
                try insertToken(token, learntFrom: "created", dueNow: false)
                outcome = .tokenRecorded
            }
            try database.query(
                "UPDATE notifications SET outcome = ?2 WHERE uuid = ?1", [.text(notification.notificationUUID), .text(outcome.rawValue)])
            return outcome
        }
    }

    /// A token Apple told of; one already known keeps its row and gains the type and expiry Apple gave.
    private func insertToken(_ token: ExternalPurchaseToken, learntFrom: String, dueNow: Bool) throws {
        try database.query(
            """
            INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                token_expiration_date, learnt_from, due_now)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            ON CONFLICT (external_purchase_id) DO UPDATE SET
                token_type = coalesce(excluded.token_type, report_tokens.token_type),
                token_expiration_date = coalesce(excluded.token_expiration_date, report_tokens.token_expiration_date)
            """,
            [
                .text(token.externalPurchaseId), .text(token.bundleId), .integer(token.appAppleId), .text(token.environment.rawValue),
                .integer(token.tokenCreationDate), .text(token.tokenType?.rawValue), .integer(token.tokenExpirationDate), .text(learntFrom),
                .integer(dueNow ? 1 : 0),
            ])
    }

    public func recentNotifications(limit: Int) throws -> [StoredNotification] {
        var found: [StoredNotification] = []
        try database.query(
            """
            SELECT uuid, type, subtype, signed_date, external_purchase_id, environment, outcome, received_at
            FROM notifications ORDER BY received_at DESC, uuid LIMIT ?1
            """, [.integer(Int64(limit))]
        ) { row in
            found.append(
                StoredNotification(
                    notificationUUID: try row.text(0), notificationType: try row.text(1), subtype: try row.optionalText(2),
                    signedDate: try row.int64(3), externalPurchaseId: try row.optionalText(4), environment: try row.text(5),
                    outcome: try row.text(6), receivedAt: try row.int64(7)))
        }
        return found
    }
}
