import Foundation
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

/// Each store's schema is one ordered list of steps (`SQLiteMigrations`, `PostgresMigrations`): a store left
/// at any earlier version by an older linkout upgrades to exactly the schema a new store gets.
@Suite(.serialized) struct MigrationTests {
    /// SQLite's schema as text: every table, index, view and trigger with its SQL.
    static func schema(_ path: String) throws -> [String] {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        let query = try connection.prepare(
            "SELECT type, name, coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
        var rows: [String] = []
        while try query.step() { rows.append("\(query.text(0)) \(query.text(1)): \(query.text(2))") }
        return rows
    }

    /// A path in a folder of its own, made.
    static func path() throws -> String {
        let path = StoreFixtures.temporaryPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        return path
    }

    @Test func aSQLiteStoreAtEveryEarlierVersionUpgradesToANewStoresSchema() throws {
        let fresh = try Self.path()
        try SQLiteTokenStore(path: fresh).close()
        let expected = try Self.schema(fresh)
        #expect(expected.count > 20, "\(expected.count) objects")
        #expect(SQLiteMigrations.all.map(\.version) == Array(2...SQLiteMigrations.latestVersion), "one step per version, in order")
        for version in [0] + Array(2..<SQLiteMigrations.latestVersion) {
            let path = try Self.path()
            do {
                let connection = try SQLiteConnection(path: path, readOnly: false)
                try SQLiteTokenStore.migrate(connection, upTo: version)
                #expect(try connection.integer("PRAGMA user_version") == Int64(version))
            }
            let upgraded = try SQLiteTokenStore(path: path)
            #expect(try upgraded.connection.integer("PRAGMA user_version") == SQLiteTokenStore.schemaVersion)
            upgraded.close()
            #expect(try Self.schema(path) == expected, "from version \(version)")
        }
    }

    /// Version 12: reports refused before it. A no-purchase report (nothing in it to correct) is due again at
    /// once, with its requestIdentifier; a LINE_ITEM one waits for a restatement or `report retry`.
    @Test func refusedReportsFromBeforeVersionTwelveAreSentAgainWhenNothingInThemCanBeCorrected() throws {
        let path = try Self.path()
        do {
            let connection = try SQLiteConnection(path: path, readOnly: false)
            try SQLiteTokenStore.migrate(connection, upTo: 11)
            for (id, status) in [("quiet", "NO_LINE_ITEM"), ("bought", "LINE_ITEM")] {
                try connection.execute(
                    """
                    INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, blocked)
                    VALUES ('\(id)', 'com.example', 1, 'production', 1790000000000, 1);
                    INSERT INTO reports (request_identifier, external_purchase_id, bundle_id, environment, status, body, state, attempts,
                        next_attempt_at, created_at, finished_at, last_answer)
                    VALUES ('request-\(id)', '\(id)', 'com.example', 'production', '\(status)', '{}', 'failed', 1, 0, 1790000000000,
                        1790000001000, 'HTTP 400');
                    """)
            }
        }
        try SQLiteTokenStore(path: path).close()
        let reporting = try SQLReportingStore(sqlitePath: path)
        let refused = Dictionary(uniqueKeysWithValues: try reporting.failedReports(limit: 5).map { ($0.externalPurchaseId, $0) })
        #expect(refused["quiet"]?.retryAt == 1790000001000 && refused["quiet"]?.refusals == 1)
        #expect(refused["bought"] != nil && refused["bought"]?.retryAt == nil)
        #expect(try reporting.planReports(now: 1800000000000, noPurchaseAfterMs: 0, gatherMs: 0) == 1)
        #expect(try reporting.claimReports(now: 1800000000000, leaseMs: 10_000, limit: 5).map(\.requestIdentifier) == ["request-quiet"])
    }

    /// PostgreSQL's schema as text: columns with their types and defaults, indexes, triggers and functions.
    static func schema(_ connection: PostgresConnection) throws -> [String] {
        var rows: [String] = []
        for sql in [
            """
            SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
            FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'linkout_schema' ORDER BY 1
            """,
            "SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'linkout_schema' ORDER BY 1",
            "SELECT tgname || ' on ' || tgrelid::regclass::text FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1",
            "SELECT p.proname || ': ' || md5(p.prosrc) FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 1",
        ] {
            let result = try connection.execute(sql)
            rows += (0..<result.rowCount).map { result.text($0, 0) }
        }
        return rows
    }

    @Test func aPostgresStoreAtEveryEarlierVersionUpgradesToANewStoresSchema() throws {
        let fresh = try PostgresConnection(url: try PostgresServer.createDatabase())
        defer { fresh.close() }
        _ = try PostgresMigrations.migrate(fresh)
        let expected = try Self.schema(fresh)
        #expect(PostgresMigrations.all.map(\.version) == Array(1...PostgresMigrations.latestVersion))
        for version in 1..<PostgresMigrations.latestVersion {
            let connection = try PostgresConnection(url: try PostgresServer.createDatabase())
            defer { connection.close() }
            #expect(try PostgresMigrations.migrate(connection, upTo: version) == Array(1...version))
            #expect(try PostgresMigrations.migrate(connection) == Array((version + 1)...PostgresMigrations.latestVersion))
            #expect(try Self.schema(connection) == expected, "from version \(version)")
        }
    }
}
