/// The SQLite store's schema, as an ordered list of named steps, the way PostgreSQL's is
/// (`PostgresMigrations`): a new store and an old one run the same steps from their version up
/// (`SQLiteTokenStore.migrate`), each in its own transaction. A step, once released, is never edited: a
/// change is a new step at the end.
///
/// The `tokens` view is (re)created by the step to version 4 only, the last that changed `visits`, since each
/// version's view names that version's columns; the earlier steps leave a stand-in.
enum SQLiteMigrations {
    /// Version 1 (the first release) kept one merged row per token in a `tokens` table; it goes straight to 2,
    /// as a new store does, by its own step.
    static let fromVersionOne = Migration(version: 2, summary: "one visit row per token of version 1's merged tokens table", sql: """
            \(SQLiteTokenStore.visitsTable)
            INSERT INTO visits (external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale)
            SELECT external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale
            FROM tokens ORDER BY rowid;
            DROP TABLE tokens;
            CREATE VIEW tokens AS SELECT 1;
            """)

    static let all: [Migration] = [
        Migration(version: 2, summary: "visits and untokened visits", sql: """
            \(SQLiteTokenStore.visitsTable)
            CREATE TABLE untokened_visits (
                id INTEGER PRIMARY KEY,
                link TEXT NOT NULL,
                country TEXT NOT NULL,
                destination TEXT NOT NULL,
                reason TEXT NOT NULL,
                seen_at INTEGER NOT NULL
            );
            CREATE VIEW tokens AS SELECT 1;
            """),
        // Version 3: visit kinds (only shoppers' visits are hits) and experiments. Existing visits were
        // all counted as hits, so they are shoppers'.
        Migration(version: 3, summary: "visit kinds and experiments", sql: """
            ALTER TABLE visits ADD COLUMN kind TEXT NOT NULL DEFAULT 'shopper';
            ALTER TABLE visits ADD COLUMN experiment TEXT;
            ALTER TABLE visits ADD COLUMN variant TEXT;
            ALTER TABLE untokened_visits ADD COLUMN kind TEXT NOT NULL DEFAULT 'shopper';
            DROP VIEW tokens;
            CREATE VIEW tokens AS SELECT 1;
            """),
        // Version 4: exactly-once batches, and the path of unrouted tokens (link `unrouted`).
        // Exactly-once batches: Each writer batch's identity is a row of applied_batches,
        // inserted in the batch's own transaction, and each visit points at its batch's row (an outage
        // spool replays that identity into PostgreSQL). Visits written before have none.
        Migration(version: 4, summary: "applied batches (exactly once) and unrouted paths", sql: """
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
            \(SQLiteTokenStore.tokensView)
            """),
        // Version 5: reporting to Apple (line items, tokens to report, the outbox).
        Migration(version: 5, summary: "reporting to Apple", sql: SQLReportingStore.sqliteSchema),
        // Version 6: the operator dashboard's buckets and health changes (issue 15). Visits committed
        // before it are not counted: the charts start at the upgrade, as the buckets do.
        Migration(version: 6, summary: "the dashboard's buckets and health changes", sql: DashboardStore.sqliteSchema),
        // Version 7: each token's first shopper's visit in `report_tokens`, for the experiments'
        // purchases, and the visits by the hour.
        Migration(version: 7, summary: "first shoppers in reporting, visits by the hour", sql: DashboardStore.sqliteSchemaSeven),
        // Version 8: the experiments' purchases counted per bucket as line items are stored, the
        // dashboard's last slow counts kept, and the refusals by the hour.
        Migration(version: 8, summary: "purchases per bucket, saved counts, refusals by the hour", sql: DashboardStore.sqliteSchemaEight),
        // Version 9: reports count Apple's failures apart from their sends, and keep their last send's
        // time and status (the backoff, and why a report waits, in report status).
        Migration(version: 9, summary: "reports' failures apart from their sends, their last send's time and status", sql: SQLReportingStore.schemaNine(postgres: false)),
        // Version 10: the monthly statement's and month close's reads (a token's storefront, indexes by
        // month).
        Migration(version: 10, summary: "a token's storefront, indexes by month for the statement", sql: SQLReportingStore.schemaTen(postgres: false)),
        // Version 11: the payment providers' webhook events, their ids bound to tokens, Paddle's addresses.
        Migration(version: 11, summary: "payment providers' events, bindings and addresses", sql: SQLReportingStore.schemaEleven(postgres: false)),
        // Version 12: a refused report counts Apple's refusals and may be sent again on its own (RefusalRetry);
        // how far Apple's notification history was read (NotificationHistory);
        // reports Apple refused before it: those of tokens with nothing to correct (NO_LINE_ITEM,
        // UNRECOGNIZED_TOKEN) are due again at once, the LINE_ITEM ones wait for a restatement or `report retry`.
        Migration(version: 12, summary: "refused reports sent again on their own, how far Apple's notification history was read", sql: """
            -- Apple's refusals of the report (400s that are not a duplicate).
            ALTER TABLE reports ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0;
            -- When a refused report is sent again on its own (NULL: only by a restatement or report retry).
            ALTER TABLE reports ADD COLUMN retry_at INTEGER;
            UPDATE reports SET refusals = 1 WHERE state = 'failed';
            UPDATE reports SET retry_at = coalesce(finished_at, created_at) WHERE state = 'failed' AND status <> 'LINE_ITEM';
            CREATE INDEX reports_refused ON reports (finished_at) WHERE state = 'failed';
            -- How far Apple's notification history has been read, per app and environment (NotificationHistory).
            CREATE TABLE notification_history (
                bundle_id TEXT NOT NULL,
                environment TEXT NOT NULL,
                covered_until INTEGER NOT NULL,
                checked_at INTEGER NOT NULL,
                PRIMARY KEY (bundle_id, environment)
            ) WITHOUT ROWID;
            """),
    ]

    static var latestVersion: Int { all.last?.version ?? 0 }

    /// The steps a store at `version` takes to reach `last`.
    static func steps(from version: Int, upTo last: Int) -> [Migration] {
        let later = all.filter { $0.version > max(version, 2) && $0.version <= last }
        switch version {
        case 0: return all.filter { $0.version <= last }
        case 1: return (last >= 2 ? [fromVersionOne] : []) + later
        default: return later
        }
    }
}
