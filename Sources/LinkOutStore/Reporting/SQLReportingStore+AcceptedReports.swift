import LinkOutCore

/// The accepted reports of the outbox, read for `report verify`. Read-only, one short query a page, so a
/// verify beside a running `serve` holds no lock its reporter or writer would wait for.
extension SQLReportingStore: AcceptedReportStore {
    /// `reports` joined to its token for the creation date; `?1`/`?2` bound the creation date (the whole
    /// range of Int64 when no month is asked for).
    private static let acceptedSelect = """
        SELECT r.request_identifier, r.external_purchase_id, r.bundle_id, r.environment, r.status, r.body, r.attempts,
            r.failures, t.token_creation_date, coalesce(r.finished_at, 0)
        FROM reports AS r JOIN report_tokens AS t ON t.external_purchase_id = r.external_purchase_id
        WHERE r.state = 'accepted' AND t.token_creation_date >= ?1 AND t.token_creation_date < ?2
        """

    private static func bounds(_ created: Range<Int64>?) -> [SQLValue] {
        [.integer(created?.lowerBound ?? Int64.min), .integer(created?.upperBound ?? Int64.max)]
    }

    public func countAcceptedReports(tokensCreated created: Range<Int64>?) throws -> Int {
        var count = 0
        try database.query("SELECT count(*) FROM (\(Self.acceptedSelect)) AS accepted", Self.bounds(created)) {
            count = Int(try $0.int64(0))
        }
        return count
    }

    public func acceptedReports(tokensCreated created: Range<Int64>?, after: String?, limit: Int) throws -> [AcceptedReport] {
        try readAccepted(
            """
            \(Self.acceptedSelect) AND r.request_identifier > ?3 ORDER BY r.request_identifier LIMIT ?4
            """, Self.bounds(created) + [.text(after ?? ""), .integer(Int64(limit))])
    }

    public func sampleAcceptedReports(tokensCreated created: Range<Int64>?, count: Int) throws -> [AcceptedReport] {
        try readAccepted("\(Self.acceptedSelect) ORDER BY random() LIMIT ?3", Self.bounds(created) + [.integer(Int64(count))])
    }

    private func readAccepted(_ sql: String, _ values: [SQLValue]) throws -> [AcceptedReport] {
        var found: [AcceptedReport] = []
        try database.query(sql, values) { row in
            found.append(
                AcceptedReport(
                    report: OutboxReport(
                        requestIdentifier: try row.text(0), externalPurchaseId: try row.text(1), bundleId: try row.text(2),
                        environment: TokenEnvironment(rawValue: try row.text(3)) ?? .production, status: try row.text(4),
                        body: try row.text(5), attempts: Int(try row.int64(6)), failures: Int(try row.int64(7))),
                    tokenCreationDate: try row.int64(8), acceptedAt: try row.int64(9)))
        }
        return found
    }
}
