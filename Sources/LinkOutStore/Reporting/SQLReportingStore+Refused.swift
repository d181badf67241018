import LinkOutCore

/// Reports Apple refused. A refused report blocks its token (`report_tokens.blocked`) until its lines change
/// (a restatement plans a new report) or it is sent again, unchanged and with the same requestIdentifier:
/// by the reporter on its own at `retry_at` (`RefusalRetry`), or at once by `linkout report retry`.
extension SQLReportingStore {
    /// The refused reports that still stand for their tokens, from `reports AS r` joined to
    /// `report_tokens AS t`: the token is blocked by its last report, and no report was made for it since.
    static let standingRefusalSQL = """
        r.state = 'failed' AND t.blocked = 1 AND t.open_report IS NULL
            AND NOT EXISTS (SELECT 1 FROM reports AS n WHERE n.external_purchase_id = r.external_purchase_id AND n.created_at > r.created_at)
        """

    public func failedReports(limit: Int) throws -> [FailedReport] {
        var failed: [FailedReport] = []
        try database.query(
            """
            SELECT r.request_identifier, r.external_purchase_id, r.bundle_id, r.status, coalesce(r.last_answer, ''),
                coalesce(r.finished_at, 0), r.refusals, r.retry_at, t.token_creation_date, r.environment
            FROM reports AS r JOIN report_tokens AS t ON t.external_purchase_id = r.external_purchase_id
            WHERE \(Self.standingRefusalSQL)
            ORDER BY r.finished_at DESC, r.request_identifier LIMIT ?1
            """, [.integer(Int64(limit))]
        ) { row in
            failed.append(
                FailedReport(
                    requestIdentifier: try row.text(0), externalPurchaseId: try row.text(1), bundleId: try row.text(2),
                    status: try row.text(3),
                    answer: try row.text(4), finishedAt: try row.int64(5), refusals: try row.int64(6), retryAt: try row.optionalInt64(7),
                    month: UTCMonth(containing: try row.int64(8)), environment: TokenEnvironment(rawValue: try row.text(9)) ?? .production))
        }
        return failed
    }

    public func refusedCount() throws -> (count: Int64, months: [UTCMonth]) {
        var months: Set<UTCMonth> = []
        var count: Int64 = 0
        try database.query(
            """
            SELECT t.token_creation_date, r.environment FROM reports AS r JOIN report_tokens AS t ON t.external_purchase_id = r.external_purchase_id
            WHERE \(Self.standingRefusalSQL)
            """, []
        ) { row in
            count += 1
            // Sandbox tokens have no deadline: they hold no month open (MonthClose).
            if try row.text(1) == TokenEnvironment.production.rawValue { months.insert(UTCMonth(containing: try row.int64(0))) }
        }
        return (count, months.sorted())
    }

    public func retryRefused(_ selection: RefusedSelection, now: Int64) throws -> RefusedRetry {
        try syncTokens()
        return try database.transaction {
            var result = RefusedRetry()
            var standing: [(request: String, token: String)] = []
            var filter = ""
            var values: [SQLValue] = []
            switch selection {
            case .report(let request):
                filter = "AND r.request_identifier = ?1"
                values = [.text(request)]
            case .all:
                break
            case .month(let month):
                filter = "AND t.token_creation_date >= ?1 AND t.token_creation_date < ?2"
                values = [.integer(month.start), .integer(month.end)]
            }
            try database.query(
                """
                SELECT r.request_identifier, r.external_purchase_id
                FROM reports AS r JOIN report_tokens AS t ON t.external_purchase_id = r.external_purchase_id
                WHERE \(Self.standingRefusalSQL) \(filter) ORDER BY r.finished_at
                """, values
            ) { standing.append((try $0.text(0), try $0.text(1))) }
            for report in standing {
                if try requeue(report.request, token: report.token, now: now) {
                    result.requeued.append(report.request)
                } else {
                    result.notRefused.append(report.request)
                }
            }
            if case .report(let request) = selection, standing.isEmpty { result.notRefused.append(request) }
            return result
        }
    }

    /// Inside `planReports`' transaction: the refused reports whose `retry_at` has come, back in the outbox.
    func requeueRefused(dueBy now: Int64) throws -> Int {
        var due: [(request: String, token: String)] = []
        try database.query(
            """
            SELECT r.request_identifier, r.external_purchase_id
            FROM reports AS r JOIN report_tokens AS t ON t.external_purchase_id = r.external_purchase_id
            WHERE r.retry_at <= ?1 AND \(Self.standingRefusalSQL) ORDER BY r.retry_at LIMIT 500
            """, [.integer(now)]
        ) { due.append((try $0.text(0), try $0.text(1))) }
        var made = 0
        for report in due where try requeue(report.request, token: report.token, now: now) { made += 1 }
        return made
    }

    /// The refused report back in the outbox, due now, as its token's open report: the token is taken first,
    /// guarded by `open_report IS NULL`, as a new report is (`insertReport`), so two planners or a planner and
    /// `report retry` cannot both send it. Its backoff starts anew; its refusals are kept.
    private func requeue(_ request: String, token: String, now: Int64) throws -> Bool {
        var taken = false
        // The whole of `standingRefusalSQL` again, on the rows themselves: between the caller's read and this
        // write another planner (PostgreSQL) may have made, sent and had refused a newer report for the token,
        // which leaves it blocked with no open report again; this older one must not go in its place.
        try database.query(
            """
            UPDATE report_tokens SET open_report = ?2, blocked = 0
            WHERE external_purchase_id = ?1 AND open_report IS NULL AND blocked = 1
                AND EXISTS (SELECT 1 FROM reports AS r WHERE r.request_identifier = ?2 AND r.state = 'failed'
                    AND NOT EXISTS (SELECT 1 FROM reports AS n WHERE n.external_purchase_id = r.external_purchase_id AND n.created_at > r.created_at))
            RETURNING external_purchase_id
            """, [.text(token), .text(request)]
        ) { _ in taken = true }
        guard taken else { return false }
        try database.query(
            """
            UPDATE reports SET state = 'pending', next_attempt_at = ?2, retry_at = NULL, lease_until = NULL, failures = 0
            WHERE request_identifier = ?1 AND state = 'failed'
            """, [.text(request), .integer(now)])
        return true
    }
}
