/// The PostgreSQL schema, as an ordered list of migrations. `linkout store migrate` applies the missing
/// ones; `serve` and `tokens export` only check the version, so several instances never race to change a
/// shared schema while serving, and an operator chooses when it changes.
///
/// A migration, once released, is never edited: a change is a new migration at the end of the list.
enum PostgresMigrations {

    static let all: [Migration] = [
        Migration(version: 1, summary: "tokens and untokened_visits", sql: """
            -- One row per externalPurchaseId, merged on write by INSERT ... ON CONFLICT. "C" collation: ids
            -- are ASCII, and byte order is cheaper to compare and the same on every server.
            CREATE TABLE tokens (
                external_purchase_id TEXT COLLATE "C" PRIMARY KEY,
                app_apple_id BIGINT NOT NULL,
                bundle_id TEXT NOT NULL,
                token_creation_date BIGINT NOT NULL,
                token_type TEXT,
                token_expiration_date BIGINT,
                environment TEXT NOT NULL,
                link TEXT NOT NULL,
                country TEXT NOT NULL,
                destination TEXT NOT NULL,
                first_seen BIGINT NOT NULL,
                last_seen BIGINT NOT NULL,
                hits BIGINT NOT NULL,
                stale BOOLEAN NOT NULL
            );
            -- The export's order; first_seen grows with time, so new entries land at the index's right edge.
            CREATE INDEX tokens_first_seen ON tokens (first_seen, external_purchase_id);
            CREATE TABLE untokened_visits (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                link TEXT NOT NULL,
                country TEXT NOT NULL,
                destination TEXT NOT NULL,
                reason TEXT NOT NULL,
                seen_at BIGINT NOT NULL
            );
            """),
        Migration(version: 2, summary: "spool_replays", sql: """
            -- How far each instance's outage spool has been replayed: one row per spool stream (the spool
            -- file's id and table), holding the last spool row id applied. Moved forward in the same
            -- transaction as the replayed visits, so a replay repeated after a crash skips what it applied.
            CREATE TABLE spool_replays (
                stream TEXT COLLATE "C" PRIMARY KEY,
                last_rowid BIGINT NOT NULL,
                updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
            );
            """),
        Migration(version: 3, summary: "visit kinds and experiments", sql: """
            -- Prefetches, HEADs and bots are recorded but are not hits: they count in other_visits. A token's
            -- experiment and variant are its first visit's. Untokened visits keep their kind.
            ALTER TABLE tokens
                ADD COLUMN other_visits BIGINT NOT NULL DEFAULT 0,
                ADD COLUMN experiment TEXT,
                ADD COLUMN variant TEXT;
            ALTER TABLE untokened_visits ADD COLUMN kind TEXT NOT NULL DEFAULT 'shopper';
            """),
        Migration(version: 4, summary: "applied_batches and unrouted paths", sql: """
            -- Exactly-once batches: each writer batch's identity (the instance's id for this run and the
            -- batch's sequence number) is inserted in the same transaction as its visits. A retry of a batch
            -- whose COMMIT landed although its acknowledgement was lost finds its row and adds nothing; a
            -- spool replay skips the visits of a batch that landed here before it was spooled (via_spool is
            -- false only for a batch the writer committed directly). Rows older than 7 days are pruned.
            CREATE TABLE applied_batches (
                instance_id TEXT COLLATE "C" NOT NULL,
                sequence BIGINT NOT NULL,
                via_spool BOOLEAN NOT NULL DEFAULT false,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                PRIMARY KEY (instance_id, sequence)
            );
            CREATE INDEX applied_batches_applied_at ON applied_batches (applied_at);
            -- A token that arrived on a path no link serves (link 'unrouted') keeps that path.
            ALTER TABLE tokens ADD COLUMN path TEXT;
            """),
        Migration(version: 5, summary: "reporting to Apple", sql: """
            -- The same tables as the SQLite store's (SQLReportingStore.sqliteSchema), which the reporting
            -- statements are written against once for both. See there for what each column means.
            CREATE TABLE report_tokens (
                external_purchase_id TEXT COLLATE "C" PRIMARY KEY,
                bundle_id TEXT NOT NULL,
                app_apple_id BIGINT NOT NULL,
                environment TEXT NOT NULL,
                token_creation_date BIGINT NOT NULL,
                token_type TEXT,
                token_expiration_date BIGINT,
                learnt_from TEXT NOT NULL DEFAULT 'visit',
                lines_changed_at BIGINT,
                open_report TEXT COLLATE "C",
                accepted_status TEXT,
                blocked INTEGER NOT NULL DEFAULT 0,
                due_now INTEGER NOT NULL DEFAULT 0,
                reminded INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX report_tokens_unreported ON report_tokens (token_creation_date) WHERE accepted_status IS NULL;
            CREATE INDEX report_tokens_changed ON report_tokens (lines_changed_at) WHERE lines_changed_at IS NOT NULL;
            CREATE TABLE line_items (
                bundle_id TEXT COLLATE "C" NOT NULL,
                line_item_id TEXT COLLATE "C" NOT NULL,
                external_purchase_id TEXT COLLATE "C" NOT NULL,
                body TEXT NOT NULL,
                revision BIGINT NOT NULL,
                accepted_revision BIGINT NOT NULL DEFAULT 0,
                received_at BIGINT NOT NULL,
                PRIMARY KEY (bundle_id, line_item_id)
            );
            CREATE INDEX line_items_token ON line_items (external_purchase_id);
            CREATE TABLE reports (
                request_identifier TEXT COLLATE "C" PRIMARY KEY,
                external_purchase_id TEXT COLLATE "C" NOT NULL,
                bundle_id TEXT NOT NULL,
                environment TEXT NOT NULL,
                status TEXT NOT NULL,
                body TEXT NOT NULL,
                state TEXT NOT NULL,
                attempts BIGINT NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                lease_until BIGINT,
                created_at BIGINT NOT NULL,
                finished_at BIGINT,
                last_answer TEXT
            );
            CREATE INDEX reports_open ON reports (next_attempt_at) WHERE state IN ('pending', 'sending');
            CREATE INDEX reports_token ON reports (external_purchase_id);
            CREATE TABLE report_lines (
                request_identifier TEXT COLLATE "C" NOT NULL,
                bundle_id TEXT COLLATE "C" NOT NULL,
                line_item_id TEXT COLLATE "C" NOT NULL,
                revision BIGINT NOT NULL,
                PRIMARY KEY (request_identifier, line_item_id)
            );
            CREATE TABLE notifications (
                uuid TEXT COLLATE "C" PRIMARY KEY,
                type TEXT NOT NULL,
                subtype TEXT,
                signed_date BIGINT NOT NULL,
                external_purchase_id TEXT COLLATE "C",
                environment TEXT NOT NULL,
                outcome TEXT NOT NULL,
                received_at BIGINT NOT NULL,
                payload TEXT NOT NULL
            );
            CREATE INDEX notifications_received ON notifications (received_at);
            -- Every new token comes into reporting in the writer's own transaction, whichever instance or
            -- spool replay inserts it: one statement-level trigger per batch, over the rows the batch's
            -- INSERT ... ON CONFLICT actually inserted (merged visits of known tokens are updates).
            CREATE FUNCTION linkout_report_new_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                \(reportNewTokens)
                RETURN NULL;
            END $$;
            CREATE TRIGGER tokens_into_reporting AFTER INSERT ON tokens
                REFERENCING NEW TABLE AS new_tokens FOR EACH STATEMENT EXECUTE FUNCTION linkout_report_new_tokens();
            -- The tokens recorded before this version.
            INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date,
                token_type, token_expiration_date)
            SELECT external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                token_expiration_date
            FROM tokens;
            """),
        // The operator dashboard (issue 15): counts per 5-minute bucket, upserted in each batch's own
        // transaction, and the health checker's up/down changes. Earlier visits are not counted.
        Migration(version: 6, summary: "dashboard buckets and destination health", sql: DashboardStore.postgresSchema),
        Migration(version: 7, summary: "dashboard visits by the hour, line items by arrival", sql: DashboardStore.postgresMigrationSeven),
        Migration(version: 8, summary: "experiments' purchases per bucket, saved counts, refusals by the hour",
                  sql: DashboardStore.postgresMigrationEight),
        Migration(version: 9, summary: "reports' failures apart from their sends, their last send's time and status",
                  sql: SQLReportingStore.schemaNine(postgres: true)),
        Migration(version: 10, summary: "indexes for the monthly statement and month close",
                  sql: SQLReportingStore.schemaTen(postgres: true)),
        Migration(version: 11, summary: "payment providers' events, their ids bound to tokens, Paddle's addresses",
                  sql: SQLReportingStore.schemaEleven(postgres: true)),
        // Version 12: a refused report counts Apple's refusals and may be sent again on its own (RefusalRetry);
        // how far Apple's notification history was read (NotificationHistory);
        // reports Apple refused before it: those of tokens with nothing to correct (NO_LINE_ITEM,
        // UNRECOGNIZED_TOKEN) are due again at once, the LINE_ITEM ones wait for a restatement or `report retry`.
        Migration(version: 12, summary: "refused reports sent again on their own, how far Apple's notification history was read", sql: """
            -- Apple's refusals of the report (400s that are not a duplicate).
            ALTER TABLE reports ADD COLUMN refusals BIGINT NOT NULL DEFAULT 0;
            -- When a refused report is sent again on its own (NULL: only by a restatement or report retry).
            ALTER TABLE reports ADD COLUMN retry_at BIGINT;
            UPDATE reports SET refusals = 1 WHERE state = 'failed';
            UPDATE reports SET retry_at = coalesce(finished_at, created_at) WHERE state = 'failed' AND status <> 'LINE_ITEM';
            CREATE INDEX reports_refused ON reports (finished_at) WHERE state = 'failed';
            -- How far Apple's notification history has been read, per app and environment (NotificationHistory).
            CREATE TABLE notification_history (
                bundle_id TEXT COLLATE "C" NOT NULL,
                environment TEXT COLLATE "C" NOT NULL,
                covered_until BIGINT NOT NULL,
                checked_at BIGINT NOT NULL,
                PRIMARY KEY (bundle_id, environment)
            );
            """),
    ]

    /// The insert trigger's statement that brings a batch's new tokens into reporting: migration 5's, and
    /// again in migration 8's replacement of that trigger (`PurchaseTally`).
    static let reportNewTokens = """
        INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment,
            token_creation_date, token_type, token_expiration_date)
        SELECT external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
            token_expiration_date
        FROM new_tokens
        ON CONFLICT DO NOTHING;
        """

    /// The version this build reads and writes.
    static var latestVersion: Int { all.last?.version ?? 0 }

    /// Serialises migrations across every process on the database: `pg_advisory_xact_lock` on this key
    /// (the bytes of "linkout") is held until the migrating transaction ends.
    static let lockKey: Int64 = 0x6c_69_6e_6b_6f_75_74

    /// The version the database is at: 0 when `linkout_schema` does not exist yet.
    static func currentVersion(_ connection: PostgresConnection) throws -> Int {
        let exists = try connection.execute("SELECT to_regclass('linkout_schema') IS NOT NULL")
        guard exists.rowCount == 1, exists.text(0, 0) == "t" else { return 0 }
        let version = try connection.execute("SELECT coalesce(max(version), 0) FROM linkout_schema")
        return Int(try version.int64(0, 0))
    }

    /// Applies every missing migration, each in its own transaction under the advisory lock, so two
    /// instances migrating at once apply each migration exactly once. Returns the versions applied.
    /// `upTo` stops early: the upgrade tests build a database as an older linkout left it.
    static func migrate(_ connection: PostgresConnection, upTo last: Int = latestVersion) throws -> [Int] {
        var applied: [Int] = []
        while true {
            let version: Int? = try connection.transaction {
                try connection.execute("SELECT pg_advisory_xact_lock(\(lockKey))")
                try connection.execute("""
                    CREATE TABLE IF NOT EXISTS linkout_schema (
                        version INTEGER PRIMARY KEY,
                        applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                    )
                    """)
                // Read under the lock: another process may have migrated while this one waited.
                let current = try currentVersion(connection)
                if current > latestVersion {
                    throw StoreError(
                        "migrating \(connection.displayName)",
                        "the schema is at version \(current), newer than this linkout's \(latestVersion): upgrade linkout", kind: .schemaMismatch)
                }
                guard let next = all.first(where: { $0.version > current && $0.version <= last }) else { return nil }
                try connection.execute(next.sql)
                try connection.execute("INSERT INTO linkout_schema (version) VALUES ($1)", parameters: [String(next.version)])
                return next.version
            }
            guard let version else { return applied }
            applied.append(version)
        }
    }

    /// What to run. The URL is shown with its password hidden (`***`), which pasted would be the
    /// password: then the command names the URL to give rather than this one.
    static func migrateHint(_ displayName: String) -> String {
        displayName.contains("***")
            ? "run `linkout store migrate --store URL` with this store's URL, password included (\(displayName), its password hidden here)"
            : "run `linkout store migrate --store \(displayName)`"
    }

    /// Refuses a database whose schema is not the one this build knows, with what to do about it.
    static func checkVersion(_ connection: PostgresConnection) throws {
        let current = try currentVersion(connection)
        if current < latestVersion {
            throw StoreError(
                "opening \(connection.displayName)",
                "the schema is at version \(current), this linkout needs version \(latestVersion): \(migrateHint(connection.displayName))", kind: .schemaMismatch)
        }
        if current > latestVersion {
            throw StoreError(
                "opening \(connection.displayName)",
                "the schema is at version \(current), newer than this linkout's \(latestVersion): upgrade linkout", kind: .schemaMismatch)
        }
    }
}
