import Foundation
import LinkOutCore

/// The embedded store: one SQLite file in WAL mode with `synchronous=FULL`, so a committed batch
/// survives a crash or a power cut, and an export can read while the gateway writes.
public final class SQLiteTokenStore: TokenStore {
    /// The schema version this build writes, kept in `PRAGMA user_version`.
    static let schemaVersion: Int64 = 1

    private let connection: SQLiteConnection
    private var upsertToken: SQLiteStatement?
    private var insertUntokened: SQLiteStatement?
    private var begin: SQLiteStatement?
    private var commitStatement: SQLiteStatement?
    private var rollback: SQLiteStatement?

    /// Opens (creating if needed) the store for writing.
    public init(path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        connection = try SQLiteConnection(path: path, readOnly: false)
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute("PRAGMA synchronous=FULL")
        try migrate()
        upsertToken = try connection.prepare("""
            INSERT INTO tokens (external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, 1, ?12)
            ON CONFLICT (external_purchase_id) DO UPDATE SET
                first_seen = min(first_seen, excluded.first_seen),
                last_seen = max(last_seen, excluded.last_seen),
                hits = hits + 1
            """)
        insertUntokened = try connection.prepare("""
            INSERT INTO untokened_visits (link, country, destination, reason, seen_at) VALUES (?1, ?2, ?3, ?4, ?5)
            """)
        begin = try connection.prepare("BEGIN IMMEDIATE")
        commitStatement = try connection.prepare("COMMIT")
        rollback = try connection.prepare("ROLLBACK")
    }

    /// Opens an existing store for reading only (exports). A missing file is an error, not a new store.
    public init(readingFrom path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError("opening \(path)", "no store at this path (start the gateway first, or pass --store)")
        }
        connection = try SQLiteConnection(path: path, readOnly: true)
        let version = try connection.integer("PRAGMA user_version")
        guard version == Self.schemaVersion else {
            throw StoreError("opening \(path)", "schema version \(version), this linkout reads version \(Self.schemaVersion)")
        }
    }

    private func migrate() throws {
        let version = try connection.integer("PRAGMA user_version")
        if version > Self.schemaVersion {
            throw StoreError("opening \(connection.path)", "schema version \(version) is newer than this linkout (\(Self.schemaVersion))")
        }
        if version < 1 {
            try connection.execute("""
                BEGIN;
                CREATE TABLE IF NOT EXISTS tokens (
                    external_purchase_id TEXT NOT NULL PRIMARY KEY,
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
                CREATE TABLE IF NOT EXISTS untokened_visits (
                    id INTEGER PRIMARY KEY,
                    link TEXT NOT NULL,
                    country TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    seen_at INTEGER NOT NULL
                );
                PRAGMA user_version = 1;
                COMMIT;
                """)
        }
    }

    public func commit(_ visits: [VisitRecord]) throws {
        guard let upsertToken, let insertUntokened, let begin, let commitStatement, let rollback else {
            throw StoreError("writing", "the store was opened read-only")
        }
        try begin.run()
        do {
            for visit in visits {
                switch visit {
                case .token(let record):
                    upsertToken.bind(1, record.externalPurchaseId)
                    upsertToken.bind(2, record.appAppleId)
                    upsertToken.bind(3, record.bundleId)
                    upsertToken.bind(4, record.tokenCreationDate)
                    upsertToken.bind(5, record.tokenType?.rawValue)
                    upsertToken.bind(6, record.tokenExpirationDate)
                    upsertToken.bind(7, record.environment.rawValue)
                    upsertToken.bind(8, record.link)
                    upsertToken.bind(9, record.country)
                    upsertToken.bind(10, record.destination)
                    upsertToken.bind(11, record.seenAt)
                    upsertToken.bind(12, Int64(record.stale ? 1 : 0))
                    try upsertToken.run()
                case .untokened(let visit):
                    insertUntokened.bind(1, visit.link)
                    insertUntokened.bind(2, visit.country)
                    insertUntokened.bind(3, visit.destination)
                    insertUntokened.bind(4, visit.reason.rawValue)
                    insertUntokened.bind(5, visit.seenAt)
                    try insertUntokened.run()
                }
            }
            // With WAL and synchronous=FULL, COMMIT returns after the WAL is fsynced: this is the moment
            // the batch's redirects may be sent.
            try commitStatement.run()
        } catch {
            try? rollback.run()
            throw error
        }
    }

    public func forEachToken(_ body: (StoredToken) throws -> Void) throws {
        let query = try connection.prepare("""
            SELECT external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale
            FROM tokens ORDER BY rowid
            """)
        while try query.step() {
            try body(StoredToken(
                externalPurchaseId: query.text(0), appAppleId: query.int64(1), bundleId: query.text(2),
                tokenCreationDate: query.int64(3), tokenType: query.optionalText(4),
                tokenExpirationDate: query.optionalInt64(5), environment: query.text(6), link: query.text(7),
                country: query.text(8), destination: query.text(9), firstSeen: query.int64(10),
                lastSeen: query.int64(11), hits: query.int64(12), stale: query.int64(13) != 0))
        }
    }

    public func untokenedVisitCount() throws -> Int {
        Int(try connection.integer("SELECT count(*) FROM untokened_visits"))
    }

    public func close() {
        upsertToken = nil
        insertUntokened = nil
        begin = nil
        commitStatement = nil
        rollback = nil
        // Fold the WAL back into the database so the file stands alone after a clean stop.
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
