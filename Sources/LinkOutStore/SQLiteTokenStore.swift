import Foundation
import LinkOutCore

/// The embedded store: one SQLite file in WAL mode with `synchronous=FULL`, so a committed batch
/// survives a crash or a power cut, and an export can read while the gateway writes.
///
/// Visits are appended to `visits`, one row each, and `tokens` is a view that merges them per
/// `externalPurchaseId` (first seen, last seen, hits; the other fields from the first visit). Measured on
/// this project's machines, a table with a unique index on the random ids falls to ~25k rows/s once the
/// index outgrows a few pages of cache, cache size and mmap notwithstanding: each row of a batch dirties
/// a different index page, and WAL writes whole pages. Appending stays flat at ~340k rows/s to 10 million
/// rows (bench/stages/writer), and repeat visits are rare (double taps, browser retries), so merging when
/// reading costs far less than merging on every write.
public final class SQLiteTokenStore: TokenStore {
    /// The schema version this build writes, kept in `PRAGMA user_version`.
    static let schemaVersion: Int64 = 11

    /// Internal for the outage spool, which keeps its bookkeeping in the same file.
    let connection: SQLiteConnection
    private var insertVisit: SQLiteStatement?
    private var insertUntokened: SQLiteStatement?
    private var claimBatch: SQLiteStatement?
    private var lastPrune: Date?
    private var begin: SQLiteStatement?
    private var commitStatement: SQLiteStatement?
    private var rollback: SQLiteStatement?
    private(set) var checkpointer: SQLiteCheckpointer?
    /// False only in `bench/stages/writer`'s comparison: commits skip the dashboard's bucket upserts, which
    /// leaves the commit path as it was before schema 6 (the same statements, the same transaction), so the
    /// buckets' cost per visit can be measured against it in one process. Also false for the outage spool:
    /// its replay into PostgreSQL counts the buckets there, and nothing reads the spool's.
    public var writesDashboardBuckets = true

    /// Opens (creating or upgrading if needed) the store for writing.
    public convenience init(path: String) throws {
        try self.init(path: path, checkpointsInBackground: true)
    }

    /// - Parameter checkpointsInBackground: false only for tests that run the checkpointer's rounds by hand.
    init(path: String, checkpointsInBackground: Bool) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        connection = try SQLiteConnection(path: path, readOnly: false)
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute("PRAGMA synchronous=FULL")
        try migrate()
        // Outside the versioned schema: a scratch row for `probe`, which no reader looks at.
        try connection.execute("CREATE TABLE IF NOT EXISTS linkout_probe (id INTEGER PRIMARY KEY, at INTEGER)")
        insertVisit = try connection.prepare("""
            INSERT INTO visits (external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale,
                kind, experiment, variant, batch, path)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?13, ?12, ?14, ?15, ?16, ?17, ?18)
            """)
        insertUntokened = try connection.prepare("""
            INSERT INTO untokened_visits (link, country, destination, reason, seen_at, kind, batch)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """)
        claimBatch = try connection.prepare(
            "INSERT OR IGNORE INTO applied_batches (instance_id, sequence, applied_at) VALUES (?1, ?2, ?3)")
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commitStatement = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
        // Checkpoints run beside the writer, not inside its commits.
        try connection.execute("PRAGMA wal_autocheckpoint=0")
        // A WAL that grew while a long read held its frames (an export, a dashboard query) is cut back to
        // 64 MiB when it next starts over, rather than keeping its peak size on disk.
        try connection.execute("PRAGMA journal_size_limit=67108864")
        let checkpointer = try SQLiteCheckpointer(path: path)
        if checkpointsInBackground { checkpointer.start() }
        self.checkpointer = checkpointer
    }

    /// Opens an existing store for reading only (exports). A missing file is an error, not a new store.
    public init(readingFrom path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError("opening \(path)", "no store at this path (start the gateway first, or pass --store)")
        }
        connection = try SQLiteConnection(path: path, readOnly: true)
        let version = try connection.integer("PRAGMA user_version")
        guard version == Self.schemaVersion else {
            let hint = version < Self.schemaVersion ? " (start linkout serve on it once to upgrade it)" : ""
            throw StoreError("opening \(path)", "schema version \(version), this linkout reads version \(Self.schemaVersion)\(hint)", kind: .schemaMismatch)
        }
    }

    /// The token view: visits merged per id by the rule `TokenMerge` states (mirrored here in SQL, held to
    /// the same results by StoreFixtures' shared checks), in the order tokens were first committed (`visit_id`). Hits
    /// are shoppers' visits; prefetches, HEADs and bots are `other_visits`. The other fields come from the
    /// token's first shopper's visit, or its first visit if no shopper came: a link preview or prefetch
    /// made before the shopper's tap may have seen another country or an experiment since ended.
    private static let tokensView = """
        CREATE VIEW tokens AS
        SELECT v.external_purchase_id, v.app_apple_id, v.bundle_id, v.token_creation_date, v.token_type,
            v.token_expiration_date, v.environment, v.link, v.country, v.destination,
            merged.first_seen, merged.last_seen, merged.hits, v.stale, merged.first_visit AS visit_id,
            merged.other_visits, v.experiment, v.variant, v.path
        FROM (
            SELECT min(id) AS first_visit,
                coalesce(min(CASE WHEN kind = 'shopper' THEN id END), min(id)) AS field_visit,
                min(first_seen) AS first_seen, max(last_seen) AS last_seen, sum(hits) AS hits,
                sum(CASE WHEN kind = 'shopper' THEN 0 ELSE 1 END) AS other_visits
            FROM visits GROUP BY external_purchase_id
        ) AS merged
        JOIN visits AS v ON v.id = merged.field_visit;
        """

    private static let visitsTable = """
        CREATE TABLE visits (
            id INTEGER PRIMARY KEY,
            external_purchase_id TEXT NOT NULL,
            app_apple_id INTEGER NOT NULL,
            bundle_id TEXT NOT NULL,
            token_creation_date INTEGER NOT NULL,
            token_type TEXT,
            token_expiration_date INTEGER,
            environment TEXT NOT NULL,
            link TEXT NOT NULL,
            country TEXT NOT NULL,
            destination TEXT NOT NULL,
            first_seen INTEGER NOT NULL,
            last_seen INTEGER NOT NULL,
            hits INTEGER NOT NULL,
            stale INTEGER NOT NULL
        );
        """

    /// Brings the file to `schemaVersion`, one version at a time, each step in its own transaction.
    private func migrate() throws {
        var version = try connection.integer("PRAGMA user_version")
        if version > Self.schemaVersion {
            throw StoreError("opening \(connection.path)", "schema version \(version) is newer than this linkout (\(Self.schemaVersion))", kind: .schemaMismatch)
        }
        while version < Self.schemaVersion {
            // Versions 0 and 1 go straight to 2, as they always did.
            let next = max(version + 1, 2)
            // A step that fails part-way is rolled back whole: the file stays at the version before it.
            try connection.transaction { try connection.execute(Self.migration(from: version) + "\nPRAGMA user_version = \(next);") }
            version = next
        }
    }

    /// The step from `version`. The `tokens` view is (re)created by the step to version 4 only, the last
    /// that changed `visits`, since each version's view names that version's columns; the earlier steps
    /// leave a stand-in.
    private static func migration(from version: Int64) -> String {
        switch version {
        case 0:
            return """
                \(visitsTable)
                CREATE TABLE untokened_visits (
                    id INTEGER PRIMARY KEY,
                    link TEXT NOT NULL,
                    country TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    seen_at INTEGER NOT NULL
                );
                CREATE VIEW tokens AS SELECT 1;
                """
        case 1:
            // Version 1 kept one merged row per token in a `tokens` table: each becomes one visit row
            // carrying its merged first seen, last seen and hits.
            return """
                \(visitsTable)
                INSERT INTO visits (external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                    token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale)
                SELECT external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                    token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale
                FROM tokens ORDER BY rowid;
                DROP TABLE tokens;
                CREATE VIEW tokens AS SELECT 1;
                """
        case 2:
            // Version 3: visit kinds (only shoppers' visits are hits) and experiments. Existing visits were
            // all counted as hits, so they are shoppers'.
            return """
                ALTER TABLE visits ADD COLUMN kind TEXT NOT NULL DEFAULT 'shopper';
                ALTER TABLE visits ADD COLUMN experiment TEXT;
                ALTER TABLE visits ADD COLUMN variant TEXT;
                ALTER TABLE untokened_visits ADD COLUMN kind TEXT NOT NULL DEFAULT 'shopper';
                DROP VIEW tokens;
                CREATE VIEW tokens AS SELECT 1;
                """
        case 3:
            // Version 4: exactly-once batches, and the path of unrouted tokens (link `unrouted`).
            // Exactly-once batches: Each writer batch's identity is a row of applied_batches,
            // inserted in the batch's own transaction, and each visit points at its batch's row (an outage
            // spool replays that identity into PostgreSQL). Visits written before have none.
            return """
                CREATE TABLE applied_batches (
                    id INTEGER PRIMARY KEY,
                    instance_id TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    applied_at INTEGER NOT NULL,
                    UNIQUE (instance_id, sequence)
                );
                ALTER TABLE visits ADD COLUMN batch INTEGER;
                ALTER TABLE untokened_visits ADD COLUMN batch INTEGER;
                ALTER TABLE visits ADD COLUMN path TEXT;
                DROP VIEW tokens;
                \(tokensView)
                """
        case 4:
            // Version 5: reporting to Apple (line items, tokens to report, the outbox).
            return SQLReportingStore.sqliteSchema
        case 5:
            // Version 6: the operator dashboard's buckets and health changes (issue 15). Visits committed
            // before it are not counted: the charts start at the upgrade, as the buckets do.
            return DashboardStore.sqliteSchema
        case 6:
            // Version 7: each token's first shopper's visit in `report_tokens`, for the experiments'
            // purchases, and the visits by the hour.
            return DashboardStore.sqliteSchemaSeven
        case 7:
            // Version 8: the experiments' purchases counted per bucket as line items are stored, the
            // dashboard's last slow counts kept, and the refusals by the hour.
            return DashboardStore.sqliteSchemaEight
        case 8:
            // Version 9: reports count Apple's failures apart from their sends, and keep their last send's
            // time and status (the backoff, and why a report waits, in report status).
            return SQLReportingStore.schemaNine(postgres: false)
        case 9:
            // Version 10: the monthly statement's and month close's reads (a token's storefront, indexes by
            // month).
            return SQLReportingStore.schemaTen(postgres: false)
        case 10:
            // Version 11: the payment providers' webhook events, their ids bound to tokens, Paddle's addresses.
            return SQLReportingStore.schemaEleven(postgres: false)
        default:
            preconditionFailure("no step from schema version \(version): migrate() stops at \(schemaVersion)")
        }
    }

    public func commit(_ visits: [VisitRecord]) throws {
        try commit(visits, identity: nil)
    }

    /// Commits a writer batch at most once: its identity goes into `applied_batches` in the batch's own
    /// transaction, and a batch whose identity is already there commits nothing.
    ///
    /// Why a retry could otherwise count twice: with WAL and `synchronous=FULL`, a COMMIT that returns an
    /// error has normally not reached the disk (SQLite rolls the transaction back), but an fsync that fails
    /// after the WAL frames were written (EIO on a flaky disk, a full disk reported late) leaves frames that
    /// a later reader may find valid. The writer retries such a batch; the identity makes the retry a no-op
    /// if the first attempt did land, so the guarantee does not rest on how a given SQLite and file system
    /// report a half-failed fsync.
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity) throws {
        try commit(visits, identity: batch)
    }

    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, extras: DashboardExtras) throws {
        try commit(visits, identity: batch, extras: extras)
    }

    private func commit(_ visits: [VisitRecord], identity: BatchIdentity?, extras: DashboardExtras = DashboardExtras()) throws {
        guard let insertVisit, let insertUntokened, let begin, let commitStatement, let rollback else {
            throw StoreError("writing", "the store was opened read-only")
        }
        guard let claimBatch else { throw StoreError("writing", "the store was opened read-only") }
        // Between batches, so that this one starts the WAL over (SQLiteCheckpointer says why).
        checkpointer?.catchUpIfDue(on: connection)
        try begin.run()
        do {
            var batchRow: Int64?
            if let identity {
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                claimBatch.bind(1, identity.instance)
                claimBatch.bind(2, identity.sequence)
                claimBatch.bind(3, now)
                try claimBatch.run()
                if connection.changes == 0 {
                    // This batch is already committed: a failure was reported for an attempt that landed.
                    try commitStatement.run()
                    return
                }
                batchRow = connection.lastInsertRowid
            }
            for visit in visits {
                switch visit {
                case .token(let record):
                    insertVisit.bind(1, record.externalPurchaseId)
                    insertVisit.bind(2, record.appAppleId)
                    insertVisit.bind(3, record.bundleId)
                    insertVisit.bind(4, record.tokenCreationDate)
                    insertVisit.bind(5, record.tokenType?.rawValue)
                    insertVisit.bind(6, record.tokenExpirationDate)
                    insertVisit.bind(7, record.environment.rawValue)
                    insertVisit.bind(8, record.link)
                    insertVisit.bind(9, record.country)
                    insertVisit.bind(10, record.destination)
                    insertVisit.bind(11, record.seenAt)
                    insertVisit.bind(12, Int64(record.stale ? 1 : 0))
                    insertVisit.bind(13, Int64(record.kind == .shopper ? 1 : 0))
                    insertVisit.bind(14, record.kind.rawValue)
                    insertVisit.bind(15, record.experiment)
                    insertVisit.bind(16, record.variant)
                    insertVisit.bind(17, batchRow)
                    insertVisit.bind(18, record.path)
                    try insertVisit.run()
                case .untokened(let visit):
                    insertUntokened.bind(1, visit.link)
                    insertUntokened.bind(2, visit.country)
                    insertUntokened.bind(3, visit.destination)
                    insertUntokened.bind(4, visit.reason.stored)
                    insertUntokened.bind(5, visit.seenAt)
                    insertUntokened.bind(6, visit.kind.rawValue)
                    insertUntokened.bind(7, batchRow)
                    try insertUntokened.run()
                }
            }
            // The dashboard's counts, a handful of upserts per batch, in the batch's own transaction.
            if writesDashboardBuckets { try DashboardWrites.write(visits, extras: extras, to: connection) }
            // With WAL and synchronous=FULL, COMMIT returns after the WAL is fsynced: this is the moment
            // the batch's redirects may be sent.
            try commitStatement.run()
        } catch {
            try? rollback.run()
            throw error
        }
        if identity != nil { pruneAppliedBatchesIfDue() }
    }

    /// At most once an hour, after a batch's commit and in a transaction of its own (a failed delete must not
    /// undo the batch it rode with), drops batch identities older than 7 days: a retry comes within seconds,
    /// and a spool not replayed for a week loses only the check against a batch that landed in PostgreSQL as
    /// well (its visits then count again).
    private func pruneAppliedBatchesIfDue() {
        if let lastPrune, Date().timeIntervalSince(lastPrune) < 3600 { return }
        lastPrune = Date()
        let cutoff = Int64(Date().timeIntervalSince1970 * 1000) - 7 * 86_400_000
        try? connection.execute("DELETE FROM applied_batches WHERE applied_at < \(cutoff)")
    }

    /// Rewrites one row of `linkout_probe` in its own transaction: the same lock, WAL append and fsync a
    /// batch goes through.
    public func probe() throws {
        guard let begin, let commitStatement, let rollback else {
            throw StoreError("writing", "the store was opened read-only")
        }
        try begin.run()
        do {
            try connection.execute("INSERT OR REPLACE INTO linkout_probe (id, at) VALUES (1, strftime('%s','now'))")
            try commitStatement.run()
        } catch {
            try? rollback.run()
            throw error
        }
    }

    public func forEachToken(_ body: (StoredToken) throws -> Void) throws {
        let query = try connection.prepare("""
            SELECT \(TokenColumns.exportSelect)
            FROM tokens AS t LEFT JOIN report_tokens AS r ON r.external_purchase_id = t.external_purchase_id
            ORDER BY t.visit_id
            """)
        while try query.step() { try body(try TokenColumns.exported(query)) }
    }

    public func untokenedVisitCount() throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM untokened_visits"))
    }

    public func close() {
        checkpointer?.stop()
        checkpointer = nil
        insertVisit = nil
        insertUntokened = nil
        claimBatch = nil
        begin = nil
        commitStatement = nil
        rollback = nil
        // Fold the WAL back into the database so the file stands alone after a clean stop.
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
