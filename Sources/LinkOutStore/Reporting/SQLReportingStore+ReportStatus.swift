import LinkOutCore

extension ReportStatusStore {
    /// Every month with tokens, against its deadline (`reporting.monthCloseDay`).
    public func monthClose(config: GatewayConfig, now: Int64) throws -> [MonthClose.State] {
        MonthClose.states(try monthCounts(), closeDay: config.reporting?.monthCloseDay ?? MonthClose.defaultCloseDay, now: now)
    }
}

/// Where reporting stands (`ReportStatusStore`): tokens by state, the notifications' outcomes, the tokens
/// by age for the dashboard, and each month's tokens against their accepted reports (`MonthClose`).
/// Refused reports that stand: SQLReportingStore+Refused; the tokens' sync: SQLReportingStore+TokenSync.
extension SQLReportingStore: ReportStatusStore {
    public func status(now: Int64, noPurchaseAfterMs: Int64, gatherMs: Int64) throws -> ReportStatusSummary {
        try database.transaction {
            var summary = ReportStatusSummary()
            try countTokens(into: &summary, now: now, noPurchaseAfterMs: noPurchaseAfterMs, gatherMs: gatherMs)
            summary.health = try health(now: now)
            try database.query(
                """
                SELECT type, coalesce(subtype, ''), outcome, count(*) FROM notifications GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
                """, []
            ) { row in
                summary.notifications.append(
                    ReportStatusSummary.NotificationCount(
                        type: try row.text(0), subtype: try row.text(1), outcome: try row.text(2), count: try row.int64(3)))
            }
            try database.query("SELECT count(*) FROM report_tokens WHERE reminded = 1", []) { summary.reminded = try $0.int64(0) }
            return summary
        }
    }

    /// Tokens by app, environment and reporting state. A token's open report decides first, with the same
    /// rule as `reportStateSQL`, so its `sending` and `retrying` are the outbox's own counts; a token whose
    /// line items changed is due once they have gathered (`linesGatheredSQL`, as `planReports` plans it), and
    /// waiting until then.
    private func countTokens(into summary: inout ReportStatusSummary, now: Int64, noPurchaseAfterMs: Int64, gatherMs: Int64) throws {
        let day: Int64 = 86_400_000
        try database.query(
            """
            SELECT t.bundle_id, t.environment,
                CASE
                    WHEN t.open_report IS NOT NULL THEN \(Self.reportStateSQL("r"))
                    WHEN t.blocked = 1 THEN 'failed'
                    WHEN \(Self.linesGatheredSQL("t", cutoff: "?4")) THEN 'due'
                    WHEN t.lines_changed_at IS NOT NULL THEN 'waiting'
                    WHEN t.accepted_status IS NOT NULL THEN 'reported'
                    WHEN t.due_now = 1 OR t.token_creation_date <= ?2 THEN
                        CASE WHEN EXISTS (SELECT 1 FROM line_items AS l WHERE l.external_purchase_id = t.external_purchase_id)
                            THEN 'waiting' ELSE 'due' END
                    ELSE 'waiting'
                END AS state,
                count(*),
                sum(CASE WHEN t.accepted_status IS NULL AND t.token_creation_date <= ?1 - 7 * ?3 THEN 1 ELSE 0 END),
                sum(CASE WHEN t.accepted_status IS NULL AND t.token_creation_date <= ?1 - 10 * ?3 THEN 1 ELSE 0 END)
            FROM report_tokens AS t LEFT JOIN reports AS r ON r.request_identifier = t.open_report
            GROUP BY 1, 2, 3 ORDER BY 1, 2
            """, [.integer(now), .integer(now - noPurchaseAfterMs), .integer(day), .integer(now - gatherMs)]
        ) { row in
            let bundleId = try row.text(0)
            let environment = try row.text(1)
            if summary.rows.last.map({ $0.bundleId != bundleId || $0.environment != environment }) ?? true {
                summary.rows.append(ReportStatusSummary.Row(bundleId: bundleId, environment: environment))
            }
            let count = try row.int64(3)
            let last = summary.rows.count - 1
            switch try row.text(2) {
            case "sending": summary.rows[last].sending += count
            case "retrying": summary.rows[last].retrying += count
            // A report planned and not yet sent: due, as a token whose report is not planned yet.
            case "due", "to_send": summary.rows[last].due += count
            case "failed": summary.rows[last].failed += count
            case "reported": summary.rows[last].reported += count
            default: summary.rows[last].waiting += count
            }
            summary.rows[last].unreportedPastDay7 += try row.int64(4)
            summary.rows[last].unreportedPastDay10 += try row.int64(5)
        }
    }

    /// Tokens without an accepted report, by whole days of age since their creation (day 0 first), for
    /// the dashboard's chart against Apple's day-10 line. Reads the `report_tokens_unreported` index only.
    public func unreportedAges(now: Int64) throws -> [Int64: Int64] {
        var ages: [Int64: Int64] = [:]
        try database.query(
            """
            SELECT (?1 - token_creation_date) / 86400000, count(*) FROM report_tokens
            WHERE accepted_status IS NULL GROUP BY 1
            """, [.integer(now)]
        ) { row in
            ages[max(0, try row.int64(0)), default: 0] += try row.int64(1)
        }
        return ages
    }

    /// Every month's tokens (by creation, UTC) against those with an accepted report, by environment.
    public func monthCounts() throws -> [MonthClose.Count] {
        try syncTokens()
        let month =
            database.isPostgres
            ? "to_char(to_timestamp(token_creation_date / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM')"
            : "strftime('%Y-%m', token_creation_date / 1000, 'unixepoch')"
        var counts: [MonthClose.Count] = []
        try database.query(
            """
            SELECT \(month), count(*), sum(CASE WHEN accepted_status IS NOT NULL THEN 1 ELSE 0 END), environment
            FROM report_tokens GROUP BY 1, 4 ORDER BY 1, 4
            """, []
        ) { row in
            guard let month = UTCMonth(try row.text(0)) else { return }
            counts.append(
                MonthClose.Count(
                    month: month, tokens: try row.int64(1), reported: try row.int64(2),
                    environment: TokenEnvironment(rawValue: try row.text(3)) ?? .production))
        }
        return counts
    }
}
