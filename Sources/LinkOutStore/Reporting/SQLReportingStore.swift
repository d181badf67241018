import Foundation
import LinkOutCore

/// Reporting's tables, the same in both stores: line items, the tokens still to report and the outbox, each
/// store on a connection of its own, with one set of statements for SQLite and PostgreSQL.
///
/// Tokens come into `report_tokens` off the shoppers' path. In SQLite, from `visits` by a cursor on the
/// visit id (`report_sync`), read by the reporter and the API: the writer keeps appending visits without
/// touching an index on random ids (see SQLiteTokenStore for why that matters). Visit ids grow in commit
/// order, since SQLite has one writer at a time and `visits` is never deleted from, so the cursor misses
/// none. In PostgreSQL, by a trigger on `tokens` in the writer's own transaction (PostgresMigrations): its
/// instances commit concurrently, so no cursor could be trusted there.
public final class SQLReportingStore: ReportingStore {
    /// Internal for the dashboard's queries, which share the connection.
    let database: any ReportingDatabase
    /// Visits brought into reporting per transaction: each holds the write lock, which the gateway's
    /// writer waits for, so it stays short: 1,000 inserts into the token index took 42-54 ms with 2 million
    /// tokens known (random keys, see SQLiteTokenStore), the longest a shopper's commit then waits.
    static let syncChunk: Int64 = 1_000

    /// Opens a SQLite store file for reporting. The file must exist with the current schema: `serve`
    /// creates and upgrades it.
    public init(sqlitePath path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError("opening \(path)", "no store at this path (start the gateway first, or pass --store)")
        }
        let connection = try SQLiteConnection(path: path, readOnly: false)
        let version = try connection.integer("PRAGMA user_version")
        guard version == SQLiteTokenStore.schemaVersion else {
            let hint = version < SQLiteTokenStore.schemaVersion ? " (start linkout serve on it once to upgrade it)" : ""
            throw StoreError("opening \(path)", "schema version \(version), this linkout reads version \(SQLiteTokenStore.schemaVersion)\(hint)", kind: .schemaMismatch)
        }
        database = connection
    }

    /// Opens a PostgreSQL store for reporting; its schema must be current (`linkout store migrate`).
    public init(postgresURL url: String, timeoutMs: Int? = nil) throws {
        let connection = try PostgresConnection(url: url, timeoutMs: timeoutMs)
        try PostgresMigrations.checkVersion(connection)
        database = connection
    }

    private init(database: any ReportingDatabase) {
        self.database = database
    }

    /// For `serve` in spool mode, which starts while PostgreSQL is down (README: Outages): as
    /// `init(postgresURL:timeoutMs:)` when the server answers; when it cannot be reached, a store that
    /// connects (and checks the schema) on first use instead, each call failing as in an outage until then,
    /// so that the reporter, the notification intake and the API start with the shoppers' listener and
    /// work once the server is back. A schema that is not this build's is refused at once, as always.
    /// `unreachable` says why the server could not be reached now (nil when it was).
    public static func connectingWhenReachable(postgresURL url: String, timeoutMs: Int?) throws -> (store: SQLReportingStore, unreachable: String?) {
        do {
            return (try SQLReportingStore(postgresURL: url, timeoutMs: timeoutMs), nil)
        } catch let error as StoreError where error.kind != .schemaMismatch {
            return (SQLReportingStore(database: DeferredPostgresConnection(url: url, timeoutMs: timeoutMs)), "\(error)")
        }
    }

    /// The SQLite tables, created by the store's migration to the version that added reporting.
    static let sqliteSchema = """
        -- One row per token reporting knows of; its state decides what the reporter sends next.
        CREATE TABLE report_tokens (
            external_purchase_id TEXT PRIMARY KEY,
            bundle_id TEXT NOT NULL,
            app_apple_id INTEGER NOT NULL,
            environment TEXT NOT NULL,
            token_creation_date INTEGER NOT NULL,
            token_type TEXT,
            token_expiration_date INTEGER,
            -- 'visit'; 'notification' for a token only Apple's UNREPORTED told of (reported
            -- UNRECOGNIZED_TOKEN); 'created' for a custom-link token Apple's CREATED or ACTIVE_TOKEN_REMINDER
            -- told of (minted by the app, so reported like a visit's: NO_LINE_ITEM or LINE_ITEM).
            learnt_from TEXT NOT NULL DEFAULT 'visit',
            -- When a line changed that no report carries yet; NULL when there is none.
            lines_changed_at INTEGER,
            -- The report on its way to Apple: one per token at a time.
            open_report TEXT,
            -- The status Apple accepted for it (LINE_ITEM once any LINE_ITEM was accepted).
            accepted_status TEXT,
            -- 1 after Apple refused its last report: nothing more is sent until its lines change.
            blocked INTEGER NOT NULL DEFAULT 0,
            -- 1 when it must be reported now, whatever its window (Apple's UNREPORTED notification).
            due_now INTEGER NOT NULL DEFAULT 0,
            -- 1 once Apple's UNREPORTED named it before any report of it was accepted: the window or the
            -- reporter is wrong (counted in report status and the metrics).
            reminded INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE INDEX report_tokens_unreported ON report_tokens (token_creation_date) WHERE accepted_status IS NULL;
        CREATE INDEX report_tokens_changed ON report_tokens (lines_changed_at) WHERE lines_changed_at IS NOT NULL;
        -- The checkout's line items, in Apple's shape, one row per lineItemId of an app.
        CREATE TABLE line_items (
            bundle_id TEXT NOT NULL,
            line_item_id TEXT NOT NULL,
            external_purchase_id TEXT NOT NULL,
            body TEXT NOT NULL,
            -- 1 when first stored, one more per restatement; accepted_revision is the one Apple holds.
            revision INTEGER NOT NULL,
            accepted_revision INTEGER NOT NULL DEFAULT 0,
            received_at INTEGER NOT NULL,
            PRIMARY KEY (bundle_id, line_item_id)
        ) WITHOUT ROWID;
        CREATE INDEX line_items_token ON line_items (external_purchase_id);
        -- The outbox: every report made, with its exact body (a retry resends it with the same
        -- requestIdentifier) and Apple's last answer.
        CREATE TABLE reports (
            request_identifier TEXT PRIMARY KEY,
            external_purchase_id TEXT NOT NULL,
            bundle_id TEXT NOT NULL,
            environment TEXT NOT NULL,
            status TEXT NOT NULL,
            body TEXT NOT NULL,
            -- pending, sending (leased until lease_until), accepted or failed.
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            lease_until INTEGER,
            created_at INTEGER NOT NULL,
            finished_at INTEGER,
            last_answer TEXT
        ) WITHOUT ROWID;
        CREATE INDEX reports_open ON reports (next_attempt_at) WHERE state IN ('pending', 'sending');
        CREATE INDEX reports_token ON reports (external_purchase_id);
        -- Which revision of which line each report carries, to mark them accepted with it.
        CREATE TABLE report_lines (
            request_identifier TEXT NOT NULL,
            bundle_id TEXT NOT NULL,
            line_item_id TEXT NOT NULL,
            revision INTEGER NOT NULL,
            PRIMARY KEY (request_identifier, line_item_id)
        ) WITHOUT ROWID;
        -- Every App Store Server Notification that passed verification, once per notificationUUID (Apple
        -- retries with the same one), with what linkout did about it and the payload as Apple signed it.
        CREATE TABLE notifications (
            uuid TEXT PRIMARY KEY,
            type TEXT NOT NULL,
            subtype TEXT,
            signed_date INTEGER NOT NULL,
            external_purchase_id TEXT,
            environment TEXT NOT NULL,
            -- NotificationOutcome: report_due, already_reported, report_blocked, unrecognized, token_recorded, stored.
            outcome TEXT NOT NULL,
            received_at INTEGER NOT NULL,
            payload TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX notifications_received ON notifications (received_at);
        -- How far `visits` has been brought into report_tokens.
        CREATE TABLE report_sync (id INTEGER PRIMARY KEY CHECK (id = 1), last_visit_id INTEGER NOT NULL);
        INSERT INTO report_sync (id, last_visit_id) VALUES (1, 0);
        """

    /// Schema 9 (SQLite) and migration 9 (PostgreSQL): Apple's failures of each report apart from its
    /// sends, and what its last send met. Only Apple's failures lengthen a report's backoff: a lease that
    /// ran out because linkout stopped used to count as one and double the wait (reports reached attempt
    /// 17-20, an hour apart, in a storm of kill -9). Reports waiting to be sent again start counting anew.
    static func schemaNine(postgres: Bool) -> String {
        let integer = SQLColumnTypes(postgres: postgres).integer
        return """
            -- 5xx, 429, no answer: what the backoff before the next try counts.
            ALTER TABLE reports ADD COLUMN failures \(integer) NOT NULL DEFAULT 0;
            -- When it was last sent, and Apple's HTTP status then (NULL: no answer): a 401's pause and the
            -- last error are read from these by report status and the dashboard.
            ALTER TABLE reports ADD COLUMN last_attempt_at \(integer);
            ALTER TABLE reports ADD COLUMN last_status \(integer);
            """
    }

    /// Schema 10 (SQLite) and migration 10 (PostgreSQL): what the monthly statement and month close read.
    /// A token's storefront on SQLite, its first visit's (a registration's country, or a link's), which the
    /// statement takes unless a shopper's visit came (PostgreSQL's `tokens` row holds it already); and
    /// indexes on a token's creation, a line item's date and an untokened visit's time, each read by month.
    static func schemaTen(postgres: Bool) -> String {
        """
        \(postgres ? "" : "ALTER TABLE report_tokens ADD COLUMN country TEXT;")
        CREATE INDEX report_tokens_created ON report_tokens (token_creation_date);
        CREATE INDEX line_items_created ON line_items (\(lineItemCreationDate(postgres: postgres, alias: nil)));
        CREATE INDEX untokened_visits_seen ON untokened_visits (seen_at);
        """
    }

    /// A line item's `creationDate` from its stored body, written as the index of schema 10 is, so that a
    /// query by date uses it.
    static func lineItemCreationDate(postgres: Bool, alias: String?) -> String {
        let body = alias.map { "\($0).body" } ?? "body"
        return postgres ? "((\(body)::jsonb ->> 'creationDate')::bigint)" : "json_extract(\(body), '$.creationDate')"
    }

    // MARK: Tokens

    /// A token's reporting state for the export, from `report_tokens AS r` joined to the token: one
    /// expression for both stores' exports.
    static let exportColumns = """
        CASE WHEN r.external_purchase_id IS NULL THEN 'unreported' WHEN r.open_report IS NOT NULL THEN 'sending'
            WHEN r.blocked = 1 THEN 'failed' WHEN r.accepted_status IS NOT NULL THEN 'reported' ELSE 'unreported' END,
        r.accepted_status
        """

    /// Brings every visit committed so far into reporting, in slices the gateway's writer passes between.
    ///
    /// Each slice holds SQLite's write lock, which every shopper's commit waits for. Back to back, slices of
    /// 1,000 visits (42-54 ms each once the token index outgrew the cache) held the writer off for seconds
    /// (`bench/latency`'s plot, bench/RESULTS.md): SQLite's busy handler sleeps 1, 2, 5 … 100 ms between
    /// tries and missed every gap. Now a slice's size follows how long the last took (about 2 ms under the
    /// lock), the next waits as long as this one took, and the writer looks for the lock every 100 µs
    /// (`SQLiteTokenStore`). A slice commits with `synchronous=NORMAL`, no fsync of its own under the lock:
    /// what it writes is derived from committed visits, and the next fsync of the WAL (the writer's next
    /// commit, the checkpointer's next round within 250 ms, or this connection's next `FULL` write, always
    /// before anything is reported from it) takes it along; a crash before that loses the slice and its
    /// `report_sync` mark together, and the next sync does it again.
    ///
    /// While it runs, its commits checkpoint only a WAL of `syncCheckpointFrames` or more. With SQLite's
    /// default of 1,000 frames, every slice's commit into a WAL past that size (a WAL starts over only
    /// after a complete checkpoint, so under load it stays larger) copied what the gateway's checkpointer
    /// had not yet and fsynced the database file: a checkpoint and an fsync every few milliseconds, each
    /// meeting the writer's fsync on the disk. In `serve` the gateway's checkpointer copies the WAL every
    /// 250 ms; without a gateway (a command on a stopped one's store), the sync checkpoints itself each
    /// 64 MiB of WAL and the WAL starts over. And its temporary files stay in memory: each slice's upsert
    /// keeps a statement journal (the pages it changes, to undo the statement alone), which past 64 KiB
    /// SQLite spilled to a new file in /var/tmp, created and unlinked once per slice. Elsewhere they stay
    /// files: an export's sort may be as large as the store. Together: a quarter to a half less CPU per
    /// visit and 40 % fewer bytes written (`bench/stages/sync`, bench/RESULTS.md).
    public func syncTokens() throws {
        guard let sqlite = database as? SQLiteConnection else { return }
        try sqlite.execute("PRAGMA synchronous=NORMAL")
        try sqlite.execute("PRAGMA wal_autocheckpoint=\(Self.syncCheckpointFrames)")
        try sqlite.execute("PRAGMA temp_store=MEMORY")
        let slices = Result { try syncSlices(sqlite) }
        // Back to FULL before anything else runs on this connection (a line item, a report in the outbox must
        // be on disk when its commit returns): a failure here is thrown, never left behind.
        try sqlite.execute("PRAGMA synchronous=FULL")
        try sqlite.execute("PRAGMA wal_autocheckpoint=1000")
        try sqlite.execute("PRAGMA temp_store=DEFAULT")
        try slices.get()
    }

    /// The most visits a sync's slice brings in, whatever the last took: a slice's commit writes every page
    /// it changed (about four per visit) to the WAL under the write lock, and while report_tokens is
    /// small a slice of 500 often took under a millisecond, so slices grew to that, and 20-45 ms when that
    /// write met the kernel's writeback, with every shopper's commit waiting (`bench/latency`,
    /// bench/RESULTS.md).
    static let syncSliceLargest: Int64 = 64

    /// The WAL's size in frames (4 KiB pages) from which a sync's commit checkpoints: 64 MiB.
    static let syncCheckpointFrames = 16_384

    /// `syncTokens`'s slices, each in a transaction of its own, with a pause after each while more wait.
    /// Stops at the newest visit committed when it began: under a load that commits visits faster than the
    /// slices bring them in, it would never end otherwise, and the dashboard's request waiting on it with it.
    private func syncSlices(_ sqlite: SQLiteConnection) throws {
        let through = try sqlite.integer("SELECT coalesce(max(id), 0) FROM visits")
        var size = Self.syncSliceLargest
        while true {
            let started = TimeSource.system.monotonicNanoseconds()
            let more = try sqlite.transaction { try syncChunk(sqlite, size: size, through: through) }
            let took = TimeSource.system.monotonicNanoseconds() - started
            if took > 2_000_000 { size = max(8, size / 2) } else if took < 1_000_000 { size = min(Self.syncSliceLargest, size * 2) }
            guard more else { return }
            usleep(UInt32(min(100_000, max(1_000, took / 1_000))))
        }
    }

    /// Brings up to `size` visits into reporting, none past visit `through` if given; true when more may be
    /// waiting (up to `through`).
    func syncChunk(_ connection: SQLiteConnection, size: Int64 = SQLReportingStore.syncChunk, through: Int64? = nil) throws -> Bool {
        let last = try connection.integer("SELECT last_visit_id FROM report_sync")
        let committed = try connection.integer("SELECT coalesce(max(id), 0) FROM visits")
        let newest = through.map { min($0, committed) } ?? committed
        guard newest > last else { return false }
        let upTo = min(newest, last + size)
        // The first visit gives the row; the first shopper's visit, which may come later, its experiment
        // (schema 7): the smallest visit id wins, so neither a later shopper's visit nor the order in which
        // the backfill reads older visits changes it. A token with line items whose first shopper changes
        // takes its purchases along (`PurchaseTally`).
        try PurchaseTally.aroundSQLiteChunk(connection, from: last, upTo: upTo) {
            try connection.query("""
                INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment,
                    token_creation_date, token_type, token_expiration_date, shopper_visit, shopper_seen, shopper_link,
                    experiment, variant, country)
                SELECT external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                    token_expiration_date, CASE WHEN kind = 'shopper' THEN id END, CASE WHEN kind = 'shopper' THEN first_seen END,
                    CASE WHEN kind = 'shopper' THEN link END, CASE WHEN kind = 'shopper' THEN experiment END,
                    CASE WHEN kind = 'shopper' THEN variant END, nullif(country, '')
                FROM visits WHERE id > ?1 AND id <= ?2 ORDER BY id
                ON CONFLICT (external_purchase_id) DO UPDATE SET
                    shopper_visit = CASE WHEN \(Self.firstShopper) THEN excluded.shopper_visit ELSE report_tokens.shopper_visit END,
                    shopper_seen = CASE WHEN \(Self.firstShopper) THEN excluded.shopper_seen ELSE report_tokens.shopper_seen END,
                    shopper_link = CASE WHEN \(Self.firstShopper) THEN excluded.shopper_link ELSE report_tokens.shopper_link END,
                    experiment = CASE WHEN \(Self.firstShopper) THEN excluded.experiment ELSE report_tokens.experiment END,
                    variant = CASE WHEN \(Self.firstShopper) THEN excluded.variant ELSE report_tokens.variant END,
                    country = coalesce(report_tokens.country, excluded.country)
                -- A token known before its first visit (from Apple's notification) takes that visit's country.
                WHERE \(Self.firstShopper) OR (report_tokens.country IS NULL AND excluded.country IS NOT NULL)
                """, [.integer(last), .integer(upTo)])
        }
        try connection.query("UPDATE report_sync SET last_visit_id = ?1", [.integer(upTo)])
        return upTo < newest
    }

    /// In the sync's upsert: the visit is the token's first shopper's (the smallest visit id of a shopper).
    private static let firstShopper = "(\(#"excluded.shopper_visit IS NOT NULL AND (report_tokens.shopper_visit IS NULL OR excluded.shopper_visit < report_tokens.shopper_visit)"#))"

    /// Reads the visits brought into reporting before schema 7 again for their tokens' first shoppers, a
    /// chunk of `syncChunk` visits per transaction, for about `budget` seconds; true when some are left.
    /// Never inserts a token: it only fills in rows already there.
    ///
    /// Each chunk holds the write lock, as a sync's does, and after each it waits as long as the chunk
    /// took: back to back, the gateway's writer (waiting in SQLite's busy handler, which sleeps 1 to 100
    /// ms between tries) could miss every gap and hold its shoppers' redirects for the whole budget.
    @discardableResult
    public func backfillFirstShoppers(budget: TimeInterval) throws -> Bool {
        guard let sqlite = database as? SQLiteConnection else { return false }
        let deadline = Date(timeIntervalSinceNow: budget)
        while true {
            let started = Date()
            let more = try sqlite.transaction {
                let from = try sqlite.integer("SELECT shoppers_from FROM report_sync")
                let until = try sqlite.integer("SELECT shoppers_until FROM report_sync")
                guard from < until else { return false }
                let upTo = min(until, from + Self.syncChunk)
                try PurchaseTally.aroundSQLiteChunk(sqlite, from: from, upTo: upTo) {
                    try sqlite.query("""
                        UPDATE report_tokens SET shopper_visit = first.id, shopper_seen = first.first_seen,
                            shopper_link = first.link, experiment = first.experiment, variant = first.variant
                        FROM (SELECT v.id, v.external_purchase_id, v.first_seen, v.link, v.experiment, v.variant
                              FROM (SELECT min(id) AS id FROM visits WHERE id > ?1 AND id <= ?2 AND kind = 'shopper'
                                    GROUP BY external_purchase_id) AS firsts
                              JOIN visits AS v ON v.id = firsts.id) AS first
                        WHERE report_tokens.external_purchase_id = first.external_purchase_id
                            AND (report_tokens.shopper_visit IS NULL OR first.id < report_tokens.shopper_visit)
                        """, [.integer(from), .integer(upTo)])
                }
                try sqlite.query("UPDATE report_sync SET shoppers_from = ?1", [.integer(upTo)])
                return upTo < until
            }
            if !more { return false }
            if Date() >= deadline { return true }
            Thread.sleep(forTimeInterval: max(0.005, Date().timeIntervalSince(started)))
        }
    }

    public func token(_ externalPurchaseId: String) throws -> ExternalPurchaseToken? {
        try token(externalPurchaseId, locking: false)
    }

    public func recordedTokens(_ ids: [String]) throws -> Set<String> {
        var found: Set<String> = []
        if ids.isEmpty { return found }
        // PostgreSQL's `tokens` is the visits merged, keyed by id. SQLite keeps its visits unindexed by id
        // (SQLiteTokenStore says why): there, reporting's row after a sync, with a visit's mark on it (a
        // token Apple told of first gains its country from its first visit or registration).
        try syncTokens()
        let recorded = database.isPostgres
            ? "SELECT external_purchase_id FROM tokens WHERE external_purchase_id IN"
            : "SELECT external_purchase_id FROM report_tokens WHERE (learnt_from = 'visit' OR country IS NOT NULL OR shopper_visit IS NOT NULL) AND external_purchase_id IN"
        for chunk in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<min($0 + 500, ids.count)]) }) {
            let placeholders = chunk.indices.map { "?\($0 + 1)" }.joined(separator: ", ")
            try database.query("\(recorded) (\(placeholders))", chunk.map { SQLValue.text($0) }) { found.insert(try $0.text(0)) }
        }
        return found
    }

    /// With `locking`, the token's row stays locked to this transaction (PostgreSQL), so two instances
    /// taking lines for one token take them one after the other.
    private func token(_ externalPurchaseId: String, locking: Bool) throws -> ExternalPurchaseToken? {
        var found: ExternalPurchaseToken?
        try database.query("""
            SELECT external_purchase_id, bundle_id, app_apple_id, token_creation_date, token_type, token_expiration_date
            FROM report_tokens WHERE external_purchase_id = ?1 \(locking ? database.forUpdate : "")
            """, [.text(externalPurchaseId)]) { row in
            found = ExternalPurchaseToken(
                appAppleId: try row.int64(2), bundleId: try row.text(1), tokenCreationDate: try row.int64(3), externalPurchaseId: try row.text(0),
                tokenType: try row.optionalText(4).flatMap(TokenType.init(rawValue:)), tokenExpirationDate: try row.optionalInt64(5))
        }
        return found
    }

    // MARK: Line items

    public func storeLineItems(
        externalPurchaseId: String, lineItemIds: [String], now: Int64,
        _ decide: (ExternalPurchaseToken, [LineItemRow]) throws -> [LineItemWrite]
    ) throws -> LineItemStoreResult {
        try syncTokens()
        return try database.transaction {
            try storeLineItemsInTransaction(externalPurchaseId: externalPurchaseId, lineItemIds: lineItemIds, now: now, decide)
        }
    }

    /// `storeLineItems` inside a transaction the caller holds: the one way lines are stored, whether a
    /// checkout posted them or a payment provider's event made them (`SQLReportingStore+Providers`).
    public func storeLineItemsInTransaction(
        externalPurchaseId: String, lineItemIds: [String], now: Int64,
        _ decide: (ExternalPurchaseToken, [LineItemRow]) throws -> [LineItemWrite]
    ) throws -> LineItemStoreResult {
        guard let token = try token(externalPurchaseId, locking: true) else { throw ReportingStoreError.unknownToken(externalPurchaseId) }
        var existing: [String: LineItemRow] = [:]
        let read: (any SQLRow) throws -> Void = { row in
            existing[try row.text(0)] = LineItemRow(
                lineItemId: try row.text(0), externalPurchaseId: try row.text(1), json: try row.text(2),
                revision: try row.int64(3), acceptedRevision: try row.int64(4))
        }
        let columns = "line_item_id, external_purchase_id, body, revision, accepted_revision"
        try database.query(
            "SELECT \(columns) FROM line_items WHERE bundle_id = ?1 AND external_purchase_id = ?2",
            [.text(token.bundleId), .text(externalPurchaseId)], row: read)
        for id in lineItemIds where existing[id] == nil {
            try database.query(
                "SELECT \(columns) FROM line_items WHERE bundle_id = ?1 AND line_item_id = ?2",
                [.text(token.bundleId), .text(id)], row: read)
        }
        let writes = try decide(token, existing.values.sorted { $0.lineItemId < $1.lineItemId })
        // The token's purchases are taken back before its lines change and counted again after
        // (`PurchaseTally`). On PostgreSQL, its `tokens` row is locked first: the writer's trigger that
        // moves a token's purchases when its first shopper comes then runs before this (and this reads
        // where it moved them) or after (and reads these lines). A token with no `tokens` row yet (known
        // from Apple's notification) has nothing to lock there: the trigger that inserts it waits for
        // this transaction's lock on its `report_tokens` row instead.
        let tally: (Int) throws -> Void = { sign in
            try self.database.query(
                PurchaseTally.apply(sign, tokensIn: "SELECT ?1", postgres: self.database.isPostgres), [.text(externalPurchaseId)])
        }
        // A checkout's retry resends the lines as stored: nothing to count again.
        let changing = writes.contains { existing[$0.lineItemId]?.json != $0.json }
        if changing {
            if database.isPostgres {
                try database.query("SELECT 1 FROM tokens WHERE external_purchase_id = ?1 FOR UPDATE", [.text(externalPurchaseId)])
            }
            try tally(-1)
        }
        var result = LineItemStoreResult()
        for write in writes {
            if let stored = existing[write.lineItemId] {
                guard stored.externalPurchaseId == externalPurchaseId else {
                    throw ReportingStoreError.lineItemOfAnotherToken(write.lineItemId)
                }
                if stored.json == write.json { result.unchanged.append(write.lineItemId); continue }
                try database.query("""
                    UPDATE line_items SET body = ?3, revision = revision + 1, received_at = ?4
                    WHERE bundle_id = ?1 AND line_item_id = ?2
                    """, [.text(token.bundleId), .text(write.lineItemId), .text(write.json), .integer(now)])
                result.restated.append(write.lineItemId)
            } else {
                try database.query("""
                    INSERT INTO line_items (bundle_id, line_item_id, external_purchase_id, body, revision, received_at)
                    VALUES (?1, ?2, ?3, ?4, 1, ?5)
                    """, [.text(token.bundleId), .text(write.lineItemId), .text(externalPurchaseId), .text(write.json), .integer(now)])
                result.added.append(write.lineItemId)
            }
        }
        if changing { try tally(1) }
        if !result.added.isEmpty || !result.restated.isEmpty {
            try database.query(
                "UPDATE report_tokens SET lines_changed_at = ?2, blocked = 0 WHERE external_purchase_id = ?1",
                [.text(externalPurchaseId), .integer(now)])
        }
        return result
    }

    // MARK: Outbox

    public func planReports(now: Int64, noPurchaseAfterMs: Int64, gatherMs: Int64) throws -> Int {
        try syncTokens()
        // After an upgrade to schema 7, a quarter of a second of the older visits per round.
        try backfillFirstShoppers(budget: 0.25)
        return try database.transaction {
            // Refused reports due again on their own come first: they are the oldest a token waits on.
            var made = try requeueRefused(dueBy: now)
            var changed: [(id: String, bundleId: String, environment: String)] = []
            try database.query("""
                SELECT external_purchase_id, bundle_id, environment FROM report_tokens
                WHERE \(Self.linesGatheredSQL(nil, cutoff: "?1")) AND open_report IS NULL
                ORDER BY lines_changed_at LIMIT 500 \(database.skipLocked)
                """, [.integer(now - gatherMs)]) { changed.append((try $0.text(0), try $0.text(1), try $0.text(2))) }
            for token in changed {
                var lines: [(id: String, revision: Int64, line: ReportBody.Line)] = []
                try database.query("""
                    SELECT line_item_id, revision, body, accepted_revision FROM line_items
                    WHERE external_purchase_id = ?1 AND bundle_id = ?2 AND revision > accepted_revision
                    ORDER BY line_item_id
                    """, [.text(token.id), .text(token.bundleId)]) { row in
                    lines.append((try row.text(0), try row.int64(1), ReportBody.Line(json: try row.text(2), acceptedBefore: try row.int64(3) > 0)))
                }
                guard ReportBody.hasSendableLines(lines.map(\.line)) else {
                    // Only withdrawals of lines Apple never took: settled here, nothing to send.
                    try database.query("""
                        UPDATE line_items SET accepted_revision = revision WHERE external_purchase_id = ?1 AND bundle_id = ?2
                        """, [.text(token.id), .text(token.bundleId)])
                    try database.query(
                        "UPDATE report_tokens SET lines_changed_at = NULL, due_now = 0 WHERE external_purchase_id = ?1", [.text(token.id)])
                    continue
                }
                let request = Self.newRequestIdentifier()
                let body = ReportBody.make(requestIdentifier: request, externalPurchaseId: token.id, status: .lineItem, lines: lines.map(\.line))
                guard try insertReport(request, token: token, status: .lineItem, body: body, now: now) else { continue }
                for line in lines {
                    try database.query("""
                        INSERT INTO report_lines (request_identifier, bundle_id, line_item_id, revision) VALUES (?1, ?2, ?3, ?4)
                        """, [.text(request), .text(token.bundleId), .text(line.id), .integer(line.revision)])
                }
                made += 1
            }

            var quiet: [(id: String, bundleId: String, environment: String, learntFrom: String)] = []
            try database.query("""
                SELECT external_purchase_id, bundle_id, environment, learnt_from FROM report_tokens AS t
                WHERE accepted_status IS NULL AND open_report IS NULL AND blocked = 0 AND lines_changed_at IS NULL
                    AND (token_creation_date <= ?1 OR due_now = 1)
                    AND NOT EXISTS (SELECT 1 FROM line_items AS l WHERE l.external_purchase_id = t.external_purchase_id)
                ORDER BY token_creation_date LIMIT 1000 \(database.skipLocked)
                """, [.integer(now - noPurchaseAfterMs)]) { quiet.append((try $0.text(0), try $0.text(1), try $0.text(2), try $0.text(3))) }
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
        _ request: String, token: (id: String, bundleId: String, environment: String), status: ExternalPurchaseReportStatus, body: String, now: Int64
    ) throws -> Bool {
        var taken = false
        try database.query("""
            UPDATE report_tokens SET open_report = ?2, lines_changed_at = NULL, due_now = 0
            WHERE external_purchase_id = ?1 AND open_report IS NULL
            RETURNING external_purchase_id
            """, [.text(token.id), .text(request)]) { _ in taken = true }
        guard taken else { return false }
        try database.query("""
            INSERT INTO reports (request_identifier, external_purchase_id, bundle_id, environment, status, body, state,
                next_attempt_at, created_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?7)
            """, [.text(request), .text(token.id), .text(token.bundleId), .text(token.environment), .text(status.rawValue), .text(body), .integer(now)])
        return true
    }

    /// A new report's id: a random (version 4) UUID, lower case, as Apple's examples write them.
    static func newRequestIdentifier() -> String { UUID().uuidString.lowercased() }

    public func claimReports(now: Int64, leaseMs: Int64, limit: Int) throws -> [OutboxReport] {
        try database.transaction {
            var claimed: [OutboxReport] = []
            try database.query("""
                UPDATE reports SET state = 'sending', lease_until = ?1 + ?2, attempts = attempts + 1
                WHERE request_identifier IN (
                    SELECT request_identifier FROM reports
                    WHERE (state = 'pending' AND next_attempt_at <= ?1) OR (state = 'sending' AND lease_until <= ?1)
                    ORDER BY next_attempt_at LIMIT ?3 \(database.skipLocked))
                -- Again on the row itself: a sender that waited for another's lock must see it taken.
                AND ((state = 'pending' AND next_attempt_at <= ?1) OR (state = 'sending' AND lease_until <= ?1))
                RETURNING request_identifier, external_purchase_id, bundle_id, environment, status, body, attempts, failures, refusals
                """, [.integer(now), .integer(leaseMs), .integer(Int64(limit))]) { row in
                claimed.append(OutboxReport(
                    requestIdentifier: try row.text(0), externalPurchaseId: try row.text(1), bundleId: try row.text(2),
                    environment: TokenEnvironment(rawValue: try row.text(3)) ?? .production, status: try row.text(4),
                    body: try row.text(5), attempts: Int(try row.int64(6)), failures: Int(try row.int64(7)), refusals: Int(try row.int64(8))))
            }
            return claimed
        }
    }

    public func finish(_ report: OutboxReport, _ outcome: ReportOutcome, now: Int64) throws {
        try database.transaction {
            let request = SQLValue.text(report.requestIdentifier)
            switch outcome {
            case .accepted(let answer):
                try database.query("""
                    UPDATE reports SET state = 'accepted', finished_at = ?2, last_answer = ?3, lease_until = NULL, last_attempt_at = ?2
                    WHERE request_identifier = ?1
                    """, [request, .integer(now), .text(answer)])
                try database.query("""
                    UPDATE line_items SET accepted_revision = (
                        SELECT r.revision FROM report_lines AS r
                        WHERE r.request_identifier = ?1 AND r.bundle_id = line_items.bundle_id AND r.line_item_id = line_items.line_item_id)
                    WHERE (bundle_id, line_item_id) IN (SELECT bundle_id, line_item_id FROM report_lines WHERE request_identifier = ?1)
                    """, [request])
                // LINE_ITEM, once accepted, is the token's status for good: Apple refuses a regression.
                try database.query("""
                    UPDATE report_tokens SET open_report = NULL,
                        accepted_status = CASE WHEN accepted_status = 'LINE_ITEM' THEN 'LINE_ITEM' ELSE ?2 END
                    WHERE external_purchase_id = ?1 AND open_report = ?3
                    """, [.text(report.externalPurchaseId), .text(report.status), request])
            case .failed(let answer, let retryAt):
                try database.query("""
                    UPDATE reports SET state = 'failed', finished_at = ?2, last_answer = ?3, lease_until = NULL, last_attempt_at = ?2,
                        refusals = refusals + 1, retry_at = ?4
                    WHERE request_identifier = ?1 AND state = 'sending'
                    """, [request, .integer(now), .text(answer), .integer(retryAt)])
                try database.query("""
                    UPDATE report_tokens SET open_report = NULL, blocked = 1 WHERE external_purchase_id = ?1 AND open_report = ?2
                    """, [.text(report.externalPurchaseId), request])
            case .retry(let next, let answer, let status):
                try database.query("""
                    UPDATE reports SET state = 'pending', next_attempt_at = ?2, last_answer = ?3, lease_until = NULL,
                        failures = failures + 1, last_attempt_at = ?4, last_status = ?5
                    WHERE request_identifier = ?1 AND state = 'sending'
                    """, [request, .integer(next), .text(answer), .integer(now), .integer(status.map(Int64.init))])
            case .unauthorized(let next, let answer, let status):
                try database.query("""
                    UPDATE reports SET state = 'pending', next_attempt_at = ?2, last_answer = ?3, lease_until = NULL,
                        last_attempt_at = ?4, last_status = ?5
                    WHERE request_identifier = ?1 AND state = 'sending'
                    """, [request, .integer(next), .text(answer), .integer(now), .integer(Int64(status))])
            case .notSent(let next):
                try database.query("""
                    UPDATE reports SET state = 'pending', next_attempt_at = ?2, lease_until = NULL, attempts = attempts - 1
                    WHERE request_identifier = ?1 AND state = 'sending'
                    """, [request, .integer(next)])
            }
        }
    }

    // MARK: Notifications

    public func recordNotification(_ notification: VerifiedNotification, now: Int64) throws -> NotificationOutcome {
        // A token a visit recorded must be in report_tokens before the notification is judged against it:
        // catch up first in short transactions, then, in SQLite, the last few visits inside this one (which
        // holds the write lock), so that a visit committed meanwhile cannot be taken for an unknown token.
        try syncTokens()
        return try database.transaction {
            if let sqlite = database as? SQLiteConnection { while try syncChunk(sqlite) {} }
            var inserted = false
            try database.query("""
                INSERT INTO notifications (uuid, type, subtype, signed_date, external_purchase_id, environment, outcome, received_at, payload)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'stored', ?7, ?8)
                ON CONFLICT (uuid) DO NOTHING RETURNING uuid
                """, [
                    .text(notification.notificationUUID), .text(notification.notificationType), .text(notification.subtype),
                    .integer(notification.signedDate), .text(notification.token?.externalPurchaseId),
                    .text(notification.environment.rawValue), .integer(now), .text(notification.payloadJSON),
                ]) { _ in inserted = true }
            // Apple's retry of a notification already taken (or two instances given the same one): one effect.
            guard inserted else { return .duplicate }
            let outcome: NotificationOutcome
            switch notification.action {
            case .keepOnly:
                outcome = .stored
            case .reportNow(let token):
                var known: (accepted: Bool, blocked: Bool)?
                try database.query("""
                    SELECT accepted_status, blocked FROM report_tokens WHERE external_purchase_id = ?1 \(database.forUpdate)
                    """, [.text(token.externalPurchaseId)]) { row in known = (try row.optionalText(0) != nil, try row.int64(1) == 1) }
                if let known {
                    try database.query("""
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
            try database.query("UPDATE notifications SET outcome = ?2 WHERE uuid = ?1", [.text(notification.notificationUUID), .text(outcome.rawValue)])
            return outcome
        }
    }

    /// A token Apple told of; one already known keeps its row and gains the type and expiry Apple gave.
    private func insertToken(_ token: ExternalPurchaseToken, learntFrom: String, dueNow: Bool) throws {
        try database.query("""
            INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                token_expiration_date, learnt_from, due_now)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            ON CONFLICT (external_purchase_id) DO UPDATE SET
                token_type = coalesce(excluded.token_type, report_tokens.token_type),
                token_expiration_date = coalesce(excluded.token_expiration_date, report_tokens.token_expiration_date)
            """, [
                .text(token.externalPurchaseId), .text(token.bundleId), .integer(token.appAppleId), .text(token.environment.rawValue),
                .integer(token.tokenCreationDate), .text(token.tokenType?.rawValue), .integer(token.tokenExpirationDate), .text(learntFrom),
                .integer(dueNow ? 1 : 0),
            ])
    }

    public func recentNotifications(limit: Int) throws -> [StoredNotification] {
        var found: [StoredNotification] = []
        try database.query("""
            SELECT uuid, type, subtype, signed_date, external_purchase_id, environment, outcome, received_at
            FROM notifications ORDER BY received_at DESC, uuid LIMIT ?1
            """, [.integer(Int64(limit))]) { row in
            found.append(StoredNotification(
                notificationUUID: try row.text(0), notificationType: try row.text(1), subtype: try row.optionalText(2),
                signedDate: try row.int64(3), externalPurchaseId: try row.optionalText(4), environment: try row.text(5),
                outcome: try row.text(6), receivedAt: try row.int64(7)))
        }
        return found
    }

    // MARK: Status

    public func status(now: Int64, noPurchaseAfterMs: Int64, gatherMs: Int64) throws -> ReportStatusSummary {
        try database.transaction {
            var summary = ReportStatusSummary()
            try countTokens(into: &summary, now: now, noPurchaseAfterMs: noPurchaseAfterMs, gatherMs: gatherMs)
            summary.health = try health(now: now)
            try database.query("""
                SELECT type, coalesce(subtype, ''), outcome, count(*) FROM notifications GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
                """, []) { row in
                summary.notifications.append(ReportStatusSummary.NotificationCount(
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
        try database.query("""
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
            """, [.integer(now), .integer(now - noPurchaseAfterMs), .integer(day), .integer(now - gatherMs)]) { row in
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

    /// A token (`alias`, or the table itself) whose changed line items are ready to report: changed at or
    /// before `cutoff` (a placeholder for now minus `reporting.gatherSeconds`), or due at once (a month
    /// closing). One rule for what `planReports` takes and what `status` counts as due.
    static func linesGatheredSQL(_ alias: String?, cutoff: String) -> String {
        let column = { (name: String) in alias.map { "\($0).\(name)" } ?? name }
        return "(\(column("lines_changed_at")) IS NOT NULL AND (\(column("lines_changed_at")) <= \(cutoff) OR \(column("due_now")) = 1))"
    }

    /// An outbox row's state as `report status` names it, from the row `alias` and `?1` (now): `sending`
    /// while a sender holds its lease, `retrying` once it was sent and waits to be sent again (after Apple's
    /// failure, a 401's pause, or a sender that stopped before Apple answered), `to_send` before its first
    /// send, else the row's own state (`accepted`, `failed`). One rule for the outbox's counts and the tokens'.
    static func reportStateSQL(_ alias: String) -> String {
        """
        CASE WHEN \(alias).state = 'sending' AND \(alias).lease_until > ?1 THEN 'sending'
            WHEN \(alias).state IN ('pending', 'sending') AND \(alias).attempts > 0 THEN 'retrying'
            WHEN \(alias).state IN ('pending', 'sending') THEN 'to_send'
            ELSE \(alias).state END
        """
    }

    /// The reporter's health, from the outbox alone: cheap (the open reports' index), so the dashboard asks
    /// on every page load.
    public func health(now: Int64, waitingLimit: Int = 20) throws -> ReporterHealth {
        var health = ReporterHealth()
        try database.query("SELECT \(Self.reportStateSQL("reports")), count(*) FROM reports GROUP BY 1", [.integer(now)]) { row in
            let count = try row.int64(1)
            switch try row.text(0) {
            case "to_send": health.toSend += count
            case "sending": health.sending += count
            case "retrying": health.retrying += count
            case "accepted": health.accepted += count
            case "failed": health.failed += count
            default: break
            }
        }
        // A 401 (or 403) paused sending until its report's next try: every other report waits for it too.
        try database.query("""
            SELECT max(next_attempt_at) FROM reports
            WHERE state IN ('pending', 'sending') AND last_status IN (401, 403) AND next_attempt_at > ?1
            """, [.integer(now)]) { health.pausedUntil = try $0.optionalInt64(0) }
        // A report whose sender's lease ran out is due again at the lease's end; one a sender holds now is
        // being tried, not waiting for a try.
        let due = "CASE WHEN state = 'sending' THEN lease_until ELSE next_attempt_at END"
        let waitingRows = "(state = 'pending' OR (state = 'sending' AND lease_until <= ?1))"
        try database.query("SELECT min(\(due)) FROM reports WHERE \(waitingRows)", [.integer(now)]) {
            health.nextTryAt = try $0.optionalInt64(0)
        }
        try database.query("""
            SELECT request_identifier, external_purchase_id, bundle_id, status, attempts, failures, last_status,
                coalesce(last_answer, ''), last_attempt_at, \(due)
            FROM reports WHERE \(waitingRows) AND attempts > 0
            ORDER BY 10, request_identifier LIMIT ?2
            """, [.integer(now), .integer(Int64(waitingLimit))]) { row in
            health.waiting.append(ReporterHealth.Waiting(
                requestIdentifier: try row.text(0), externalPurchaseId: try row.text(1), bundleId: try row.text(2),
                status: try row.text(3), attempts: try row.int64(4), failures: try row.int64(5),
                lastStatus: try row.optionalInt64(6), lastAnswer: try row.text(7), lastAttemptAt: try row.optionalInt64(8),
                nextAttemptAt: try row.int64(9)))
        }
        try database.query("""
            SELECT coalesce(last_answer, ''), last_attempt_at, external_purchase_id FROM reports
            WHERE \(waitingRows) AND attempts > 0 AND last_attempt_at IS NOT NULL
            ORDER BY last_attempt_at DESC LIMIT 1
            """, [.integer(now)]) { row in
            health.lastError = ReporterHealth.LastError(answer: try row.text(0), at: try row.int64(1), externalPurchaseId: try row.text(2))
        }
        return health
    }

    /// Tokens without an accepted report, by whole days of age since their creation (day 0 first), for
    /// the dashboard's chart against Apple's day-10 line. Reads the `report_tokens_unreported` index only.
    public func unreportedAges(now: Int64) throws -> [Int64: Int64] {
        var ages: [Int64: Int64] = [:]
        try database.query("""
            SELECT (?1 - token_creation_date) / 86400000, count(*) FROM report_tokens
            WHERE accepted_status IS NULL GROUP BY 1
            """, [.integer(now)]) { row in
            ages[max(0, try row.int64(0)), default: 0] += try row.int64(1)
        }
        return ages
    }
}

/// What the reporting store refuses.
public enum ReportingStoreError: Error, Equatable, CustomStringConvertible {
    /// Line items for an id linkout never recorded.
    case unknownToken(String)
    /// A lineItemId already used by another token of the same app.
    case lineItemOfAnotherToken(String)

    public var description: String {
        switch self {
        case .unknownToken(let id): "no token \(id) was recorded by linkout"
        case .lineItemOfAnotherToken(let id): "lineItemId \(id) is already used by another token of this app"
        }
    }
}
