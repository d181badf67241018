import Foundation
import LinkOutCore

/// The outage spool is a SQLite store file (the writer commits into it as into any `SQLiteTokenStore`) with
/// one more table, `linkout_spool`, naming the stream each table is replayed under. What the replayer
/// reads and clears is here, beside the schema it reads, so the SQLite schema is known in one type.
extension SQLiteTokenStore {
    static let spoolTables = ["visits", "untokened_visits"]

    /// Creates the spool's stream ids, once per file, and checks that visits left in it were written for
    /// this store (`store`: its URL without the password); an empty spool is taken over by any store.
    static func prepareSpool(_ connection: SQLiteConnection, store: String) throws {
        try connection.execute("CREATE TABLE IF NOT EXISTS linkout_spool (source TEXT PRIMARY KEY, stream TEXT NOT NULL)")
        for table in spoolTables {
            try connection.execute("INSERT OR IGNORE INTO linkout_spool (source, stream) VALUES ('\(table)', '\(newSpoolStream(table))')")
        }
        let owner = try connection.prepare("SELECT stream FROM linkout_spool WHERE source = 'store'")
        let recorded = try owner.step() ? owner.text(0) : nil
        owner.reset()
        if let recorded, recorded != store {
            let waiting = try connection.integer("SELECT (SELECT count(*) FROM visits) + (SELECT count(*) FROM untokened_visits)")
            if waiting > 0 {
                throw StoreError(
                    "opening the spool \(connection.path)",
                    "it holds \(waiting) visits for \(recorded), not \(store): serve with that store until it is replayed, or give this one another spool"
                )
            }
        }
        if recorded != store {
            let statement = try connection.prepare("INSERT OR REPLACE INTO linkout_spool (source, stream) VALUES ('store', ?1)")
            statement.bind(1, store)
            try statement.run()
        }
    }

    private static func newSpoolStream(_ table: String) -> String {
        "\(UUID().uuidString.lowercased())/\(table)"
    }

    /// The stream id the spool's `table` is replayed under now.
    static func spoolStream(_ table: String, in connection: SQLiteConnection) throws -> String {
        let query = try connection.prepare("SELECT stream FROM linkout_spool WHERE source = ?1")
        query.bind(1, table)
        guard try query.step() else { throw StoreError("reading \(connection.path)", "no stream id for \(table)") }
        return query.text(0)
    }

    /// The batch identity a spooled row was written with (null for rows spooled by an older linkout).
    private static func identity(_ query: SQLiteStatement, instance: Int32, sequence: Int32) -> BatchIdentity? {
        query.optionalText(instance).map { BatchIdentity(instance: $0, sequence: query.int64(sequence)) }
    }

    /// The oldest `limit` rows of the spool's `table`, as visits with their row ids and batch identities.
    static func spooledVisits(_ table: String, limit: Int, in connection: SQLiteConnection) throws -> [SpooledVisit] {
        var rows: [SpooledVisit] = []
        if table == "visits" {
            let query = try connection.prepare(
                """
                SELECT v.id, v.external_purchase_id, v.app_apple_id, v.bundle_id, v.token_creation_date, v.token_type,
                    v.token_expiration_date, v.link, v.country, v.destination, v.first_seen, v.stale, v.kind, v.experiment,
                    v.variant, b.instance_id, b.sequence, v.path
                FROM visits AS v LEFT JOIN applied_batches AS b ON b.id = v.batch ORDER BY v.id LIMIT \(limit)
                """)
            while try query.step() {
                let token = ExternalPurchaseToken(
                    appAppleId: query.int64(2), bundleId: query.text(3), tokenCreationDate: query.int64(4),
                    externalPurchaseId: query.text(1), tokenType: query.optionalText(5).flatMap(TokenType.init(rawValue:)),
                    tokenExpirationDate: query.optionalInt64(6))
                guard let kind = VisitKind(rawValue: query.text(12)) else {
                    throw StoreError("reading \(connection.path)", "unknown visit kind '\(query.text(12))' in visits")
                }
                let record = TokenRecord(
                    token: token, link: query.text(7), country: query.text(8), destination: query.text(9),
                    seenAt: query.int64(10), stale: query.int64(11) != 0, kind: kind,
                    experiment: query.optionalText(13), variant: query.optionalText(14), path: query.optionalText(17))
                rows.append(
                    SpooledVisit(
                        rowid: query.int64(0), visit: .token(record), batch: Self.identity(query, instance: 15, sequence: 16)))
            }
        } else {
            let query = try connection.prepare(
                """
                SELECT u.id, u.link, u.country, u.destination, u.reason, u.seen_at, u.kind, b.instance_id, b.sequence
                FROM untokened_visits AS u LEFT JOIN applied_batches AS b ON b.id = u.batch ORDER BY u.id LIMIT \(limit)
                """)
            while try query.step() {
                guard let reason = UntokenedReason(stored: query.text(4)) else {
                    throw StoreError("reading \(connection.path)", "unknown reason '\(query.text(4))' in untokened_visits")
                }
                guard let kind = VisitKind(rawValue: query.text(6)) else {
                    throw StoreError("reading \(connection.path)", "unknown visit kind '\(query.text(6))' in untokened_visits")
                }
                let visit = UntokenedVisit(
                    link: query.text(1), country: query.text(2), destination: query.text(3), reason: reason,
                    seenAt: query.int64(5), kind: kind)
                rows.append(
                    SpooledVisit(
                        rowid: query.int64(0), visit: .untokened(visit), batch: Self.identity(query, instance: 7, sequence: 8)))
            }
        }
        return rows
    }

    /// Deletes a replayed batch from the spool, and renews the stream id if that emptied the table.
    static func clearSpooled(_ table: String, stream: String, through last: Int64, in connection: SQLiteConnection) throws {
        try connection.transaction {
            // Another process sharing this spool file may have cleared (and renewed) it meanwhile.
            guard try spoolStream(table, in: connection) == stream else { return }
            try connection.execute("DELETE FROM \(table) WHERE id <= \(last)")
            if try connection.integer("SELECT count(*) FROM (SELECT 1 FROM \(table) LIMIT 1)") == 0 {
                try connection.execute("UPDATE linkout_spool SET stream = '\(newSpoolStream(table))' WHERE source = '\(table)'")
            }
        }
    }
}
