/// Applying and checking `PostgresMigrations`' frozen steps: the advisory lock, the version table, and what
/// `serve` and `tokens export` say when the schema is not this build's.
extension PostgresMigrations {
    /// The insert trigger's statement that brings a batch's new tokens into reporting, as migrations 5 and 8
    /// wrote it (each holds its own copy now). Live code, not history: `PurchaseTally`'s text of migration 8
    /// still names it, and no migration reads either.
    static let reportNewTokens = """
        INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment,
            token_creation_date, token_type, token_expiration_date)
        SELECT external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
            token_expiration_date
        FROM new_tokens
        ON CONFLICT DO NOTHING;
        """

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
                try connection.execute(
                    """
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
                        "the schema is at version \(current), newer than this linkout's \(latestVersion): upgrade linkout",
                        kind: .schemaMismatch)
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
                "the schema is at version \(current), this linkout needs version \(latestVersion): \(migrateHint(connection.displayName))",
                kind: .schemaMismatch)
        }
        if current > latestVersion {
            throw StoreError(
                "opening \(connection.displayName)",
                "the schema is at version \(current), newer than this linkout's \(latestVersion): upgrade linkout", kind: .schemaMismatch)
        }
    }
}
