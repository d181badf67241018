import Foundation
import LinkOutCore

/// The outbox (`OutboxStore`): reports planned when due, claimed under a lease, finished with Apple's
/// answer, and the reporter's health read from the open ones. Refused reports put back: SQLReportingStore+Refused.
extension SQLReportingStore: OutboxStore {
    public func planReports(now: Int64, noPurchaseAfterMs: Int64, gatherMs: Int64) throws -> Int {
        try syncTokens()
        // After an upgrade to schema 7, a quarter of a second of the older visits per round.
        try backfillFirstShoppers(budget: 0.25)
        return try database.transaction {
            // Refused reports due again on their own come first: they are the oldest a token waits on.
            var made = try requeueRefused(dueBy: now)
            var changed: [(id: String, bundleId: String, environment: String)] = []
            try database.query(
                """
                SELECT external_purchase_id, bundle_id, environment FROM report_tokens
                WHERE \(Self.linesGatheredSQL(nil, cutoff: "?1")) AND open_report IS NULL
                ORDER BY lines_changed_at LIMIT 500 \(database.skipLocked)
                """, [.integer(now - gatherMs)]
            ) { changed.append((try $0.text(0), try $0.text(1), try $0.text(2))) }
            for token in changed {
                var lines: [(id: String, revision: Int64, line: ReportBody.Line)] = []
                try database.query(
                    """
                    SELECT line_item_id, revision, body, accepted_revision FROM line_items
                    WHERE external_purchase_id = ?1 AND bundle_id = ?2 AND revision > accepted_revision
                    ORDER BY line_item_id
                    """, [.text(token.id), .text(token.bundleId)]
                ) { row in
                    lines.append(
                        (try row.text(0), try row.int64(1), ReportBody.Line(json: try row.text(2), acceptedBefore: try row.int64(3) > 0)))
                }
                guard ReportBody.hasSendableLines(lines.map(\.line)) else {
                    // Only withdrawals of lines Apple never took: settled here, nothing to send.
                    try database.query(
                        """
                        UPDATE line_items SET accepted_revision = revision WHERE external_purchase_id = ?1 AND bundle_id = ?2
                        """, [.text(token.id), .text(token.bundleId)])
                    try database.query(
                        "UPDATE report_tokens SET lines_changed_at = NULL, due_now = 0 WHERE external_purchase_id = ?1", [.text(token.id)])
                    continue
                }
                let request = Self.newRequestIdentifier()
                let body = ReportBody.make(
                    requestIdentifier: request, externalPurchaseId: token.id, status: .lineItem, lines: lines.map(\.line))
                guard try insertReport(request, token: token, status: .lineItem, body: body, now: now) else { continue }
                for line in lines {
                    try database.query(
                        """
                        INSERT INTO report_lines (request_identifier, bundle_id, line_item_id, revision) VALUES (?1, ?2, ?3, ?4)
                        """, [.text(request), .text(token.bundleId), .text(line.id), .integer(line.revision)])
                }
                made += 1
            }

            var quiet: [(id: String, bundleId: String, environment: String, learntFrom: String)] = []
            try database.query(
                """
                SELECT external_purchase_id, bundle_id, environment, learnt_from FROM report_tokens AS t
                WHERE accepted_status IS NULL AND open_report IS NULL AND blocked = 0 AND lines_changed_at IS NULL
                    AND (token_creation_date <= ?1 OR due_now = 1)
                    AND NOT EXISTS (SELECT 1 FROM line_items AS l WHERE l.external_purchase_id = t.external_purchase_id)
                ORDER BY token_creation_date LIMIT 1000 \(database.skipLocked)
                """, [.integer(now - noPurchaseAfterMs)]
            ) { quiet.append((try $0.text(0), try $0.text(1), try $0.text(2), try $0.text(3))) }
            for token in quiet {
                let status: ExternalPurchaseReportStatus = token.learntFrom == "notification" ? .unrecognizedToken : .noLineItem
                let request = Self.newRequestIdentifier()
                let body = ReportBody.make(requestIdentifier: request, externalPurchaseId: token.id, status: status, lines: [])
                if try insertReport(request, token: (token.id, token.bundleId, token.environment), status: status, body: body, now: now) {
                    made += 1
                }
            }
            return made
        }
    }

    /// Makes the token's open report, unless another one already is (a concurrent planner): the token is
    /// taken first, guarded by `open_report IS NULL`, so no lock mode or isolation level can let two
    /// reports for one token through. Returns whether this one was made.
    private func insertReport(
        _ request: String, token: (id: String, bundleId: String, environment: String), status: ExternalPurchaseReportStatus, body: String,
        now: Int64
    ) throws -> Bool {
        var taken = false
        try database.query(
            """
            UPDATE report_tokens SET open_report = ?2, lines_changed_at = NULL, due_now = 0
            WHERE external_purchase_id = ?1 AND open_report IS NULL
            RETURNING external_purchase_id
            """, [.text(token.id), .text(request)]
        ) { _ in taken = true }
        guard taken else { return false }
        try database.query(
            """
            INSERT INTO reports (request_identifier, external_purchase_id, bundle_id, environment, status, body, state,
                next_attempt_at, created_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?7)
            """,
            [
                .text(request), .text(token.id), .text(token.bundleId), .text(token.environment), .text(status.rawValue), .text(body),
                .integer(now),
            ])
        return true
    }

    /// A new report's id: a random (version 4) UUID, lower case, as Apple's examples write them.
    static func newRequestIdentifier() -> String { UUID().uuidString.lowercased() }

    public func claimReports(now: Int64, leaseMs: Int64, limit: Int) throws -> [OutboxReport] {
        try database.transaction {
            var claimed: [OutboxReport] = []
            try database.query(
                """
                UPDATE reports SET state = 'sending', lease_until = ?1 + ?2, attempts = attempts + 1
                WHERE request_identifier IN (
                    SELECT request_identifier FROM reports
                    WHERE (state = 'pending' AND next_attempt_at <= ?1) OR (state = 'sending' AND lease_until <= ?1)
                    ORDER BY next_attempt_at LIMIT ?3 \(database.skipLocked))
                -- Again on the row itself: a sender that waited for another's lock must see it taken.
                AND ((state = 'pending' AND next_attempt_at <= ?1) OR (state = 'sending' AND lease_until <= ?1))
                RETURNING request_identifier, external_purchase_id, bundle_id, environment, status, body, attempts, failures, refusals
                """, [.integer(now), .integer(leaseMs), .integer(Int64(limit))]
            ) { row in
                claimed.append(
                    OutboxReport(
                        requestIdentifier: try row.text(0), externalPurchaseId: try row.text(1), bundleId: try row.text(2),
                        environment: TokenEnvironment(rawValue: try row.text(3)) ?? .production, status: try row.text(4),
                        body: try row.text(5), attempts: Int(try row.int64(6)), failures: Int(try row.int64(7)),
                        refusals: Int(try row.int64(8))))
            }
            return claimed
        }
    }

    public func finish(_ report: OutboxReport, _ outcome: ReportOutcome, now: Int64) throws {
        try finish([ReportFinish(report, outcome, now: now)])
    }

    public func finish(_ finishes: [ReportFinish]) throws {
        guard !finishes.isEmpty else { return }
        try database.transaction {
            for finish in finishes { try record(finish.report, finish.outcome, now: finish.now) }
        }
    }

    /// One send's outcome, inside the caller's transaction.
    private func record(_ report: OutboxReport, _ outcome: ReportOutcome, now: Int64) throws {
        do {
            let request = SQLValue.text(report.requestIdentifier)
            switch outcome {
            case .accepted(let answer):
                try database.query(
                    """
                    UPDATE reports SET state = 'accepted', finished_at = ?2, last_answer = ?3, lease_until = NULL, last_attempt_at = ?2
                    WHERE request_identifier = ?1
                    """, [request, .integer(now), .text(answer)])
                try database.query(
                    """
                    UPDATE line_items SET accepted_revision = (
                        SELECT r.revision FROM report_lines AS r
                        WHERE r.request_identifier = ?1 AND r.bundle_id = line_items.bundle_id AND r.line_item_id = line_items.line_item_id)
                    WHERE (bundle_id, line_item_id) IN (SELECT bundle_id, line_item_id FROM report_lines WHERE request_identifier = ?1)
                    """, [request])
                // LINE_ITEM, once accepted, is the token's status for good: Apple refuses a regression.
                try database.query(
                    """
                    UPDATE report_tokens SET open_report = NULL,
                        accepted_status = CASE WHEN accepted_status = 'LINE_ITEM' THEN 'LINE_ITEM' ELSE ?2 END
                    WHERE external_purchase_id = ?1 AND open_report = ?3
                    """, [.text(report.externalPurchaseId), .text(report.status), request])
            case .failed(let answer, let retryAt):
                try database.query(
                    """
                    UPDATE reports SET state = 'failed', finished_at = ?2, last_answer = ?3, lease_until = NULL, last_attempt_at = ?2,
                        refusals = refusals + 1, retry_at = ?4
                    WHERE request_identifier = ?1 AND state = 'sending'
                    """, [request, .integer(now), .text(answer), .integer(retryAt)])
                try database.query(
                    """
                    UPDATE report_tokens SET open_report = NULL, blocked = 1 WHERE external_purchase_id = ?1 AND open_report = ?2
                    """, [.text(report.externalPurchaseId), request])
            case .retry(let next, let answer, let status):
                try database.query(
                    """
                    UPDATE reports SET state = 'pending', next_attempt_at = ?2, last_answer = ?3, lease_until = NULL,
                        failures = failures + 1, last_attempt_at = ?4, last_status = ?5
                    WHERE request_identifier = ?1 AND state = 'sending'
                    """, [request, .integer(next), .text(answer), .integer(now), .integer(status.map(Int64.init))])
            case .unauthorized(let next, let answer, let status):
                try database.query(
                    """
                    UPDATE reports SET state = 'pending', next_attempt_at = ?2, last_answer = ?3, lease_until = NULL,
                        last_attempt_at = ?4, last_status = ?5
                    WHERE request_identifier = ?1 AND state = 'sending'
                    """, [request, .integer(next), .text(answer), .integer(now), .integer(Int64(status))])
            case .notSent(let next):
                try database.query(
                    """
                    UPDATE reports SET state = 'pending', next_attempt_at = ?2, lease_until = NULL, attempts = attempts - 1
                    WHERE request_identifier = ?1 AND state = 'sending'
                    """, [request, .integer(next)])
            }
        }
    }

    /// The reporter's health, from the outbox alone: cheap (the open reports' index), so the dashboard asks
    /// on every page load.
    public func health(now: Int64, waitingLimit: Int = 20) throws -> ReporterHealth {
        var health = ReporterHealth()
        try database.query(
            "SELECT \(Self.reportStateSQL("reports")), count(*), sum(CASE WHEN finished_at >= ?2 THEN 1 ELSE 0 END) FROM reports GROUP BY 1",
            [.integer(now), .integer(now - ReportBacklog.windowMs)]
        ) { row in
            let count = try row.int64(1)
            health.finishedRecently += try row.optionalInt64(2) ?? 0
            switch try row.text(0) {
            case "to_send": health.toSend += count
            case "sending": health.sending += count
            case "retrying": health.retrying += count
            case "accepted": health.accepted += count
            case "failed": health.failed += count
            default: break
            }
        }
        try database.query(
            """
            SELECT min(t.token_creation_date) FROM reports AS r JOIN report_tokens AS t ON t.external_purchase_id = r.external_purchase_id
            WHERE r.state IN ('pending', 'sending')
            """, []
        ) { health.oldestOpenTokenCreatedAt = try $0.optionalInt64(0) }
        // A 401 (or 403) paused sending until its report's next try: every other report waits for it too.
        try database.query(
            """
            SELECT max(next_attempt_at) FROM reports
            WHERE state IN ('pending', 'sending') AND last_status IN (401, 403) AND next_attempt_at > ?1
            """, [.integer(now)]
        ) { health.pausedUntil = try $0.optionalInt64(0) }
        // A report whose sender's lease ran out is due again at the lease's end; one a sender holds now is
        // being tried, not waiting for a try.
        let due = "CASE WHEN state = 'sending' THEN lease_until ELSE next_attempt_at END"
        let waitingRows = "(state = 'pending' OR (state = 'sending' AND lease_until <= ?1))"
        try database.query("SELECT min(\(due)) FROM reports WHERE \(waitingRows)", [.integer(now)]) {
            health.nextTryAt = try $0.optionalInt64(0)
        }
        try database.query(
            """
            SELECT request_identifier, external_purchase_id, bundle_id, status, attempts, failures, last_status,
                coalesce(last_answer, ''), last_attempt_at, \(due)
            FROM reports WHERE \(waitingRows) AND attempts > 0
            ORDER BY 10, request_identifier LIMIT ?2
            """, [.integer(now), .integer(Int64(waitingLimit))]
        ) { row in
            health.waiting.append(
                ReporterHealth.Waiting(
                    requestIdentifier: try row.text(0), externalPurchaseId: try row.text(1), bundleId: try row.text(2),
                    status: try row.text(3), attempts: try row.int64(4), failures: try row.int64(5),
                    lastStatus: try row.optionalInt64(6), lastAnswer: try row.text(7), lastAttemptAt: try row.optionalInt64(8),
                    nextAttemptAt: try row.int64(9)))
        }
        try database.query(
            """
            SELECT coalesce(last_answer, ''), last_attempt_at, external_purchase_id FROM reports
            WHERE \(waitingRows) AND attempts > 0 AND last_attempt_at IS NOT NULL
            ORDER BY last_attempt_at DESC LIMIT 1
            """, [.integer(now)]
        ) { row in
            health.lastError = ReporterHealth.LastError(answer: try row.text(0), at: try row.int64(1), externalPurchaseId: try row.text(2))
        }
        return health
    }
}
