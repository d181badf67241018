import LinkOutCore

/// Which tokens linkout recorded already, for the token registrations (`RecordedTokenStore`).
extension SQLReportingStore: RecordedTokenStore {
    public func recordedTokens(_ ids: [String]) throws -> Set<String> {
        var found: Set<String> = []
        if ids.isEmpty { return found }
        // PostgreSQL's `tokens` is the visits merged, keyed by id. SQLite keeps its visits unindexed by id
        // (SQLiteTokenStore says why): there, reporting's row after a sync, with a visit's mark on it (a
        // token Apple told of first gains its country from its first visit or registration).
        try syncTokens()
        let recorded =
            database.isPostgres
            ? "SELECT external_purchase_id FROM tokens WHERE external_purchase_id IN"
            : "SELECT external_purchase_id FROM report_tokens WHERE (learnt_from = 'visit' OR country IS NOT NULL OR shopper_visit IS NOT NULL) AND external_purchase_id IN"
        for chunk in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<min($0 + 500, ids.count)]) }) {
            let placeholders = chunk.indices.map { "?\($0 + 1)" }.joined(separator: ", ")
            try database.query("\(recorded) (\(placeholders))", chunk.map { SQLValue.text($0) }) { found.insert(try $0.text(0)) }
        }
        return found
    }
}
