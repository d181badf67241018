import Foundation
import LinkOutCore

/// The shared store for several instances: one PostgreSQL database, a `tokens` table keyed by
/// `externalPurchaseId`, merged on write.
///
/// Each batch of the group-commit writer is one transaction: one multi-row
/// `INSERT ... ON CONFLICT (external_purchase_id) DO UPDATE` per 3,640 tokens (PostgreSQL takes at most
/// 65,535 parameters a statement, and a token has `TokenColumns.all.count`, 18), with `synchronous_commit = on`, so COMMIT returns once the batch is
/// in the server's fsynced WAL: the moment its redirects may be sent. Unlike the SQLite store, which
/// appends visits because SQLite's unique index slowed to a crawl on random ids, PostgreSQL keeps the
/// B-tree in its own buffer cache and the upsert is what makes instances agree without talking to each
/// other: the same id sent to two instances is one row whose hits add up.
public final class PostgresTokenStore: TokenStore, @unchecked Sendable {
    /// Internal for tests, which look at the session it runs.
    let connection: PostgresConnection

    /// Columns of one untokened visit in each insert: one cast per column, so the two cannot drift apart
    /// (the token's columns are `TokenColumns`).
    private static var untokenedColumns: Int { untokenedCasts.count }
    /// PostgreSQL's wire protocol counts parameters in 16 bits.
    private static let maxParameters = 65_535

    /// Connects and checks that the schema is the one this build knows (never changes it: that is
    /// `migrate(url:)`'s job). Used both for serving and for exports.
    /// - Parameter timeoutMs: the longest a statement may take before it counts as failed (serving), or
    ///   nil for no limit (exports).
    public init(url: String, timeoutMs: Int? = nil) throws {
        connection = try PostgresConnection(url: url, timeoutMs: timeoutMs)
        try PostgresMigrations.checkVersion(connection)
    }

    /// Applies the missing migrations. Safe to run from several processes at once, and again.
    /// Returns the versions applied (empty when the schema was already current) and the version reached.
    public static func migrate(url: String) throws -> (applied: [Int], version: Int) {
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        let applied = try PostgresMigrations.migrate(connection)
        return (applied, try PostgresMigrations.currentVersion(connection))
    }

    /// The schema version this build reads and writes.
    public static var schemaVersion: Int { PostgresMigrations.latestVersion }

    /// Merges the batch's visits per id by `TokenMerge`: a single INSERT cannot touch one row twice ("ON
    /// CONFLICT DO UPDATE command cannot affect row a second time"). Sorted by id so that concurrent
    /// instances lock rows in the same order and cannot deadlock on ids they share.
    private static func merge(_ visits: [VisitRecord]) -> (tokens: [TokenMerge], untokened: [UntokenedVisit]) {
        var tokens: [String: TokenMerge] = [:]
        var untokened: [UntokenedVisit] = []
        for visit in visits {
            switch visit {
            case .token(let record):
                if tokens[record.externalPurchaseId] == nil {
                    tokens[record.externalPurchaseId] = TokenMerge(record)
                } else {
                    tokens[record.externalPurchaseId]?.add(record)
                }
            case .untokened(let visit):
                untokened.append(visit)
            }
        }
        let sorted = tokens.values.sorted { $0.fields.externalPurchaseId.utf8.lexicographicallyPrecedes($1.fields.externalPurchaseId.utf8) }
        return (sorted, untokened)
    }

    /// `($1::text, $2::bigint, ...), (...)` for `rows` rows.
    private static func valuesList(rows: Int, casts: [String]) -> String {
        var text = ""
        text.reserveCapacity(rows * casts.count * 12)
        var parameter = 1
        for row in 0..<rows {
            text += row == 0 ? "(" : ",("
            for (column, cast) in casts.enumerated() {
                if column > 0 { text += "," }
                text += "$\(parameter)::\(cast)"
                parameter += 1
            }
            text += ")"
        }
        return text
    }

    private static let untokenedCasts = ["text", "text", "text", "text", "bigint", "text"]

    /// A round trip to the server on the writer's own connection (reconnecting if needed): while the store
    /// is failing, this is what tells the writer PostgreSQL is back.
    public func probe() throws {
        try connection.ensureConnected()
        try connection.execute("SELECT 1")
    }

    public func commit(_ visits: [VisitRecord]) throws {
        if visits.isEmpty { return }
        try inTransaction { try insert(visits) }
    }

    /// Commits a writer batch exactly once: its identity row in `applied_batches` and its visits in one
    /// transaction. If the identity is already there, the batch landed before (its COMMIT reached the server
    /// but the answer did not reach linkout) and nothing more is written. A concurrent transaction still
    /// holding the same identity (the first attempt, not yet finished on the server) makes the insert wait
    /// for its outcome, so the two cannot both apply the batch.
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, now: Int64) throws {
        try commit(visits, batch: batch, extras: DashboardExtras(), now: now)
    }

    /// The server stamps each identity (`applied_at`) and prunes by its own clock; `now` only spaces the prunes.
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, extras: DashboardExtras, now: Int64) throws {
        if visits.isEmpty && extras.isEmpty { return }
        try inTransaction {
            let claimed = try connection.execute(
                "INSERT INTO applied_batches (instance_id, sequence) VALUES ($1, $2::bigint) ON CONFLICT DO NOTHING RETURNING 1",
                parameters: [batch.instance, String(batch.sequence)])
            if claimed.rowCount == 1 {
                if !visits.isEmpty { try insert(visits) }
                try DashboardWrites.write([], extras: extras, to: connection)
            }
        }
        pruneAppliedBatchesIfDue(now: now)
    }

    /// How long a batch identity is kept: far longer than any retry or spool replay takes.
    static let appliedBatchRetention = "7 days"
    /// The `now` of the batch that last pruned (Unix ms).
    private var lastPrune: Int64?

    /// At most once an hour, removes identities older than the retention, so the table stays small. Outside
    /// the batch's transaction; a failure is left for the next hour.
    private func pruneAppliedBatchesIfDue(now: Int64) {
        if let lastPrune, now - lastPrune < 3_600_000 { return }
        lastPrune = now
        _ = try? connection.execute(
            "DELETE FROM applied_batches WHERE applied_at < now() - interval '\(Self.appliedBatchRetention)'")
    }

    /// Runs `body` between BEGIN and COMMIT on the writer's connection, rolling back if anything throws.
    private func inTransaction(_ body: () throws -> Void) throws {
        // synchronous_commit = on: COMMIT returns after the WAL is flushed on the server.
        try connection.transaction(body)
    }

    /// Commits visits read back from an outage spool, exactly once: in one transaction, the visits whose
    /// spool row id is above the stream's mark in `spool_replays` (the rest were applied by an earlier
    /// replay that crashed before clearing them from the spool), and the mark moved to `lastRowid`.
    /// Visits of a writer batch that PostgreSQL already holds (its COMMIT landed, but the writer did not
    /// hear so and spooled it) are skipped too: each spooled visit carries its batch's identity, which the
    /// replay records with `via_spool` (waiting, like the writer's insert, for a transaction still holding
    /// it), then looks up among the batches the writer committed directly.
    /// Returns how many visits were applied. The mark's row lock serialises replays of one stream.
    func commitReplayed(stream: String, rows: [SpooledVisit], lastRowid: Int64) throws -> Int {
        var applied = 0
        try inTransaction {
            try connection.execute(
                "INSERT INTO spool_replays (stream, last_rowid) VALUES ($1, 0) ON CONFLICT (stream) DO NOTHING",
                parameters: [stream])
            let mark = try connection.execute(
                "SELECT last_rowid FROM spool_replays WHERE stream = $1 FOR UPDATE", parameters: [stream]
            ).int64(0, 0)
            var fresh = rows.filter { $0.rowid > mark }
            let identities = Set(fresh.compactMap(\.batch))
            if !identities.isEmpty {
                let landed = try directlyApplied(identities)
                fresh.removeAll { $0.batch.map(landed.contains) ?? false }
            }
            if !fresh.isEmpty { try insert(fresh.map(\.visit)) }
            try connection.execute(
                "UPDATE spool_replays SET last_rowid = GREATEST(last_rowid, $2::bigint), updated_at = now() WHERE stream = $1",
                parameters: [stream, String(lastRowid)])
            applied = fresh.count
        }
        return applied
    }

    /// Of `identities`, those the writer committed directly, inside the caller's transaction.
    private func directlyApplied(_ identities: Set<BatchIdentity>) throws -> Set<BatchIdentity> {
        let sorted = identities.sorted { ($0.instance, $0.sequence) < ($1.instance, $1.sequence) }
        // Array literals: each instance id quoted (they are UUIDs made by linkout, but a spool is a file).
        let instances =
            "{"
            + sorted.map {
                "\""
                    + $0.instance.replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: "\"", with: "\\\"") + "\""
            }.joined(separator: ",") + "}"
        let sequences = "{" + sorted.map { String($0.sequence) }.joined(separator: ",") + "}"
        try connection.execute(
            """
            INSERT INTO applied_batches (instance_id, sequence, via_spool)
            SELECT instance_id, sequence, true FROM unnest($1::text[], $2::bigint[]) AS b(instance_id, sequence)
            ON CONFLICT DO NOTHING
            """, parameters: [instances, sequences])
        let found = try connection.execute(
            """
            SELECT a.instance_id, a.sequence FROM applied_batches AS a
            JOIN unnest($1::text[], $2::bigint[]) AS b(instance_id, sequence)
                ON a.instance_id = b.instance_id AND a.sequence = b.sequence
            WHERE NOT a.via_spool
            """, parameters: [instances, sequences])
        var landed: Set<BatchIdentity> = []
        for row in 0..<found.rowCount {
            landed.insert(BatchIdentity(instance: found.text(row, 0), sequence: try found.int64(row, 1)))
        }
        return landed
    }

    /// The batch's upserts, inside the caller's transaction: tokens, untokened visits, and the dashboard's
    /// buckets (so a spool's replay counts its visits there too, once).
    private func insert(_ visits: [VisitRecord]) throws {
        let (tokens, untokened) = Self.merge(visits)
        try DashboardWrites.write(visits, extras: DashboardExtras(), to: connection)
        do {
            let columns = TokenColumns.all
            let tokensPerStatement = Self.maxParameters / columns.count
            var start = 0
            while start < tokens.count {
                let chunk = tokens[start..<min(start + tokensPerStatement, tokens.count)]
                var parameters: [String?] = []
                parameters.reserveCapacity(chunk.count * columns.count)
                for token in chunk {
                    let stored = token.token
                    for column in columns { parameters.append(column.postgresParameter(stored)) }
                }
                try connection.execute(
                    """
                    INSERT INTO tokens (\(TokenColumns.names()))
                    VALUES \(Self.valuesList(rows: chunk.count, casts: columns.map(\.postgresType)))
                    ON CONFLICT (external_purchase_id) DO UPDATE SET
                        first_seen = LEAST(tokens.first_seen, EXCLUDED.first_seen),
                        last_seen = GREATEST(tokens.last_seen, EXCLUDED.last_seen),
                        hits = tokens.hits + EXCLUDED.hits,
                        other_visits = tokens.other_visits + EXCLUDED.other_visits,
                        -- TokenMerge's rule across batches: a token seen only by prefetches or bots so far
                        -- takes its first shopper's fields.
                        link = CASE WHEN tokens.hits = 0 AND EXCLUDED.hits > 0 THEN EXCLUDED.link ELSE tokens.link END,
                        country = CASE WHEN tokens.hits = 0 AND EXCLUDED.hits > 0 THEN EXCLUDED.country ELSE tokens.country END,
                        destination = CASE WHEN tokens.hits = 0 AND EXCLUDED.hits > 0 THEN EXCLUDED.destination ELSE tokens.destination END,
                        stale = CASE WHEN tokens.hits = 0 AND EXCLUDED.hits > 0 THEN EXCLUDED.stale ELSE tokens.stale END,
                        experiment = CASE WHEN tokens.hits = 0 AND EXCLUDED.hits > 0 THEN EXCLUDED.experiment ELSE tokens.experiment END,
                        variant = CASE WHEN tokens.hits = 0 AND EXCLUDED.hits > 0 THEN EXCLUDED.variant ELSE tokens.variant END,
                        path = CASE WHEN tokens.hits = 0 AND EXCLUDED.hits > 0 THEN EXCLUDED.path ELSE tokens.path END
                    """, parameters: parameters)
                start += chunk.count
            }
            let untokenedPerStatement = Self.maxParameters / Self.untokenedColumns
            start = 0
            while start < untokened.count {
                let chunk = untokened[start..<min(start + untokenedPerStatement, untokened.count)]
                var parameters: [String?] = []
                parameters.reserveCapacity(chunk.count * Self.untokenedColumns)
                for visit in chunk {
                    parameters += [
                        visit.link, visit.country, visit.destination, visit.reason.stored, String(visit.seenAt), visit.kind.rawValue,
                    ]
                }
                try connection.execute(
                    """
                    INSERT INTO untokened_visits (link, country, destination, reason, seen_at, kind)
                    VALUES \(Self.valuesList(rows: chunk.count, casts: Self.untokenedCasts))
                    """, parameters: parameters)
                start += chunk.count
            }
        }
    }

    /// Streams the tokens through a cursor, a page at a time, inside one read-only snapshot: ten million
    /// rows never sit in memory at once, and rows committed meanwhile neither appear halfway nor twice.
    public func forEachToken(_ body: (StoredToken) throws -> Void) throws {
        try connection.transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
            try connection.execute(
                """
                DECLARE linkout_export NO SCROLL CURSOR FOR
                SELECT \(TokenColumns.exportSelect)
                FROM tokens AS t LEFT JOIN report_tokens AS r ON r.external_purchase_id = t.external_purchase_id
                ORDER BY t.first_seen, t.external_purchase_id
                """)
            while true {
                let page = try connection.execute("FETCH FORWARD 2000 FROM linkout_export")
                if page.rowCount == 0 { break }
                for row in 0..<page.rowCount { try body(try TokenColumns.exported(PostgresRow(result: page, row: row))) }
            }
        }
    }

    public func untokenedVisitCount() throws -> Int {
        try connection.ensureConnected()
        return Int(try connection.execute("SELECT count(*) FROM untokened_visits").int64(0, 0))
    }

    public func close() {
        connection.close()
    }
}
