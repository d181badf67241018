import CSQLite
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
    static var schemaVersion: Int64 { Int64(SQLiteMigrations.latestVersion) }

    /// Internal for the outage spool, which keeps its bookkeeping in the same file.
    let connection: SQLiteConnection
    private var insertVisit: SQLiteStatement?
    private var insertUntokened: SQLiteStatement?
    private var claimBatch: SQLiteStatement?
    /// The `now` of the batch that last pruned (Unix ms).
    private var lastPrune: Int64?
    private var begin: SQLiteStatement?
    private var commitStatement: SQLiteStatement?
    private var rollback: SQLiteStatement?
    /// A visit's text parameters, bound without SQLite copying them (`SQLiteStatement.bind(_:_:in:)`).
    private let rowText = SQLiteRowText()
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
        // Another connection's write transaction (a reporting sync's slice, the dashboard's) is waited for
        // in steps of 100 µs, not SQLite's 1, 2, 5, 10 … 100 ms: a lock held for 2 ms no longer costs the
        // shoppers of the batch waiting for it 8, or a whole sequence of slices. Gives up after about 5 s,
        // as the busy timeout did.
        sqlite3_busy_handler(
            connection.handle,
            { _, tries in
                guard tries < 40_000 else { return 0 }
                usleep(100)
                return 1
            }, nil)
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute("PRAGMA synchronous=FULL")
        try migrate()
        // Outside the versioned schema: a scratch row for `probe`, which no reader looks at.
        try connection.execute("CREATE TABLE IF NOT EXISTS linkout_probe (id INTEGER PRIMARY KEY, at INTEGER)")
        insertVisit = try connection.prepare(
            """
            INSERT INTO visits (external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale,
                kind, experiment, variant, batch, path)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?13, ?12, ?14, ?15, ?16, ?17, ?18)
            """)
        insertUntokened = try connection.prepare(
            """
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
            throw StoreError(
                "opening \(path)", "schema version \(version), this linkout reads version \(Self.schemaVersion)\(hint)",
                kind: .schemaMismatch)
        }
    }

    /// The token view: visits merged per id by the rule `TokenMerge` states (mirrored here in SQL, held to
    /// the same results by StoreFixtures' shared checks), in the order tokens were first committed (`visit_id`). Hits
    /// are shoppers' visits; prefetches, HEADs and bots are `other_visits`. The other fields come from the
    /// token's first shopper's visit, or its first visit if no shopper came: a link preview or prefetch
    /// made before the shopper's tap may have seen another country or an experiment since ended.
    static let tokensView = """
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

    static let visitsTable = """
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

    /// Brings the file to `schemaVersion`, one step of `SQLiteMigrations` at a time, each in its own
    /// transaction.
    private func migrate() throws {
        try Self.migrate(connection, upTo: SQLiteMigrations.latestVersion)
    }

    /// Applies the steps from the file's version up to `last`: a step that fails part-way is rolled back
    /// whole, so the file stays at the version before it. `last` below the latest is for the upgrade tests,
    /// which build a store as an older linkout left it.
    static func migrate(_ connection: SQLiteConnection, upTo last: Int) throws {
        let version = Int(try connection.integer("PRAGMA user_version"))
        if version > SQLiteMigrations.latestVersion {
            throw StoreError(
                "opening \(connection.path)", "schema version \(version) is newer than this linkout (\(SQLiteMigrations.latestVersion))",
                kind: .schemaMismatch)
        }
        for step in SQLiteMigrations.steps(from: version, upTo: last) {
            try connection.transaction { try connection.execute(step.sql + "\nPRAGMA user_version = \(step.version);") }
        }
    }

    public func commit(_ visits: [VisitRecord]) throws {
        try commit(visits, identity: nil, now: 0)
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
    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, now: Int64) throws {
        try commit(visits, identity: batch, now: now)
    }

    public func commit(_ visits: [VisitRecord], batch: BatchIdentity, extras: DashboardExtras, now: Int64) throws {
        try commit(visits, identity: batch, extras: extras, now: now)
    }

    /// `now` is read only with an identity: when it was applied.
    private func commit(_ visits: [VisitRecord], identity: BatchIdentity?, extras: DashboardExtras = DashboardExtras(), now: Int64) throws {
        guard let insertVisit, let insertUntokened, let begin, let commitStatement, let rollback else {
            throw StoreError("writing", "the store was opened read-only")
        }
        guard let claimBatch else { throw StoreError("writing", "the store was opened read-only") }
        rowText.reset()
        // Between batches, so that this one starts the WAL over (SQLiteCheckpointer says why).
        checkpointer?.catchUpIfDue(on: connection)
        try begin.run()
        do {
            var batchRow: Int64?
            if let identity {
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
                    insertVisit.bind(1, record.externalPurchaseId, in: rowText)
                    insertVisit.bind(2, record.appAppleId)
                    insertVisit.bind(3, record.bundleId, in: rowText)
                    insertVisit.bind(4, record.tokenCreationDate)
                    insertVisit.bind(5, record.tokenType?.rawValue, in: rowText)
                    insertVisit.bind(6, record.tokenExpirationDate)
                    insertVisit.bind(7, record.environment.rawValue, in: rowText)
                    insertVisit.bind(8, record.link, in: rowText)
                    insertVisit.bind(9, record.country, in: rowText)
                    insertVisit.bind(10, record.destination, in: rowText)
                    insertVisit.bind(11, record.seenAt)
                    insertVisit.bind(12, Int64(record.stale ? 1 : 0))
                    insertVisit.bind(13, Int64(record.kind == .shopper ? 1 : 0))
                    insertVisit.bind(14, record.kind.rawValue, in: rowText)
                    insertVisit.bind(15, record.experiment, in: rowText)
                    insertVisit.bind(16, record.variant, in: rowText)
                    insertVisit.bind(17, batchRow)
                    insertVisit.bind(18, record.path, in: rowText)
                    try insertVisit.run()
                    rowText.reset()
                case .untokened(let visit):
                    insertUntokened.bind(1, visit.link, in: rowText)
                    insertUntokened.bind(2, visit.country, in: rowText)
                    insertUntokened.bind(3, visit.destination, in: rowText)
                    insertUntokened.bind(4, visit.reason.stored, in: rowText)
                    insertUntokened.bind(5, visit.seenAt)
                    insertUntokened.bind(6, visit.kind.rawValue, in: rowText)
                    insertUntokened.bind(7, batchRow)
                    try insertUntokened.run()
                    rowText.reset()
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
        if identity != nil { pruneAppliedBatchesIfDue(now: now) }
    }

    /// At most once an hour, after a batch's commit and in a transaction of its own (a failed delete must not
    /// undo the batch it rode with), drops batch identities older than 7 days: a retry comes within seconds,
    /// and a spool not replayed for a week loses only the check against a batch that landed in PostgreSQL as
    /// well (its visits then count again).
    private func pruneAppliedBatchesIfDue(now: Int64) {
        if let lastPrune, now - lastPrune < 3_600_000 { return }
        lastPrune = now
        let cutoff = now - 7 * 86_400_000
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
        let query = try connection.prepare(
            """
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
