import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

/// The PostgreSQL store against a real server (see LinkOutTestLinkOutTestSupport/PostgresServer.swift): each test has a database
/// of its own. Without PostgreSQL installed these fail, saying what to install.
@Suite struct PostgresTokenStoreTests {
    /// A fresh database with the schema applied, and a store on it.
    private func migratedStore() throws -> (url: String, store: PostgresTokenStore) {
        let url = try PostgresServer.createDatabase()
        _ = try PostgresTokenStore.migrate(url: url)
        return (url, try PostgresTokenStore(url: url))
    }

    @Test func repeatVisitsMergeIntoOneRow() throws {
        try StoreFixtures.expectRepeatVisitsMerged(try migratedStore().store)
    }

    /// A retry of a batch that landed (its acknowledgement lost) changes nothing; another batch still counts.
    @Test func aBatchRetriedAfterItLandedCountsOnce() throws {
        let (_, store) = try migratedStore()
        let id = UUID().uuidString.lowercased()
        let batch = BatchIdentity(instance: UUID().uuidString.lowercased(), sequence: 1)
        let visits: [VisitRecord] = [.token(TokenBuilder.record(id: id)), .token(TokenBuilder.record(id: id, kind: .prefetch))]
        try store.commit(visits, batch: batch, now: StoreFixtures.appliedAt)
        try store.commit(visits, batch: batch, now: StoreFixtures.appliedAt)
        var tokens = try StoreFixtures.tokens(in: store)
        #expect(tokens.map(\.hits) == [1] && tokens.map(\.otherVisits) == [1])
        try store.commit(visits, batch: BatchIdentity(instance: batch.instance, sequence: 2), now: StoreFixtures.appliedAt)
        tokens = try StoreFixtures.tokens(in: store)
        #expect(tokens.map(\.hits) == [2] && tokens.map(\.otherVisits) == [2])
        #expect(try store.connection.execute("SELECT count(*) FROM applied_batches").int64(0, 0) == 2)
    }

    @Test func theFirstShoppersVisitGivesTheFields() throws {
        try StoreFixtures.expectShopperFieldsWin(try migratedStore().store)
    }

    @Test func theSameBatchesGiveTheSameTokensAsSQLite() throws {
        let (_, postgres) = try migratedStore()
        let sqlite = try SQLiteTokenStore(path: StoreFixtures.temporaryPath())
        let ids = (0..<20).map { _ in UUID().uuidString.lowercased() }
        var batches: [[VisitRecord]] = []
        for batch in 0..<5 {
            // Each batch repeats some ids, within the batch and across batches, with times out of order.
            batches.append(
                (0..<30).map { index in
                    let id = ids[(index * 7 + batch * 3) % ids.count]
                    // Some visits are not shoppers', and some carry an experiment's variant.
                    let kind: VisitKind = index % 5 == 0 ? .bot : index % 7 == 0 ? .prefetch : .shopper
                    return .token(
                        TokenBuilder.record(
                            id: id, seenAt: Int64(10_000 - batch * 100 + index * 13), stale: index % 3 == 0, kind: kind,
                            experiment: index % 2 == 0 ? "price-test" : nil, variant: index % 2 == 0 ? "v\(index % 4)" : nil))
                })
        }
        for batch in batches {
            try postgres.commit(batch)
            try sqlite.commit(batch)
        }
        let byId = { (tokens: [StoredToken]) in Dictionary(uniqueKeysWithValues: tokens.map { ($0.externalPurchaseId, $0) }) }
        let fromPostgres = byId(try StoreFixtures.tokens(in: postgres))
        let fromSQLite = byId(try StoreFixtures.tokens(in: sqlite))
        #expect(fromPostgres.count == fromSQLite.count)
        #expect(fromPostgres == fromSQLite)
        #expect(fromPostgres.values.reduce(0) { $0 + $1.hits + $1.otherVisits } == 150)
        #expect(fromPostgres.values.contains { $0.otherVisits > 0 } && fromPostgres.values.contains { $0.experiment != nil })
    }

    @Test func exportIsInFirstSeenOrderThenId() throws {
        let (url, store) = try migratedStore()
        let ids = (0..<50).map { _ in UUID().uuidString.lowercased() }
        try store.commit(ids.enumerated().map { .token(TokenBuilder.record(id: $1, seenAt: Int64(1_000 + $0 / 2))) })
        try store.commit([.token(TokenBuilder.record(id: "SANDBOX_" + ids[0], seenAt: 5_000, type: .acquisition))])
        // An earlier-stamped repeat visit (another instance's clock) moves its token forward.
        try store.commit([.token(TokenBuilder.record(id: ids[49], seenAt: 10))])
        store.close()

        let tokens = try StoreFixtures.tokens(in: try PostgresTokenStore(url: url))
        let expected = tokens.sorted { ($0.firstSeen, $0.externalPurchaseId) < ($1.firstSeen, $1.externalPurchaseId) }
        #expect(tokens.map(\.externalPurchaseId) == expected.map(\.externalPurchaseId))
        #expect(tokens.first?.externalPurchaseId == ids[49])
        #expect(tokens.count == 51)
        #expect(tokens.last?.environment == "sandbox")
        #expect(tokens.last?.tokenType == "ACQUISITION")
        #expect(tokens.last?.tokenExpirationDate == 9_000)
    }

    /// More rows than one statement's 65,535 parameters allow, so the batch is several INSERTs in one
    /// transaction; ids repeat across the statements' boundaries.
    @Test func aBatchLargerThanOneStatementIsChunked() throws {
        let (_, store) = try migratedStore()
        let ids = (0..<6_000).map { _ in UUID().uuidString.lowercased() }
        var visits: [VisitRecord] = ids.map { .token(TokenBuilder.record(id: $0, seenAt: 1_000)) }
        visits += ids.prefix(3_000).map { .token(TokenBuilder.record(id: $0, seenAt: 2_000)) }
        visits += (0..<14_000).map { _ in
            .untokened(
                UntokenedVisit(link: "nl", country: "nl", destination: "https://a.example.com/", reason: .refused(.missingToken), seenAt: 1)
            )
        }
        try store.commit(visits)
        let tokens = try StoreFixtures.tokens(in: store)
        #expect(tokens.count == 6_000)
        #expect(tokens.reduce(0) { $0 + $1.hits } == 9_000)
        #expect(tokens.filter { $0.hits == 2 }.allSatisfy { $0.firstSeen == 1_000 && $0.lastSeen == 2_000 })
        #expect(try store.untokenedVisitCount() == 14_000)
    }

    @Test func untokenedVisitsAreKeptApart() throws {
        let (_, store) = try migratedStore()
        try store.commit([
            .untokened(
                UntokenedVisit(link: "nl", country: "nl", destination: "https://a.example.com/", reason: .refused(.missingToken), seenAt: 1)
            )
        ])
        #expect(try store.untokenedVisitCount() == 1)
        #expect(try StoreFixtures.tokens(in: store).isEmpty)
    }

    @Test func aFailedBatchKeepsNothing() throws {
        let (url, store) = try migratedStore()
        let kept = UUID().uuidString.lowercased()
        try store.commit([.token(TokenBuilder.record(id: kept))])
        // The tokens of the batch go in first; the untokened visits then fail: none of it may stay.
        let other = try PostgresConnection(url: url)
        try other.execute("ALTER TABLE untokened_visits RENAME TO gone")
        let lost = UUID().uuidString.lowercased()
        #expect(throws: StoreError.self) {
            try store.commit([
                .token(TokenBuilder.record(id: kept)), .token(TokenBuilder.record(id: lost)),
                .untokened(
                    UntokenedVisit(
                        link: "nl", country: "nl", destination: "https://a.example.com/", reason: .refused(.missingToken), seenAt: 1)),
            ])
        }
        try other.execute("ALTER TABLE gone RENAME TO untokened_visits")
        let tokens = try StoreFixtures.tokens(in: store)
        #expect(tokens.map(\.externalPurchaseId) == [kept])
        #expect(tokens.first?.hits == 1)
        // And the connection is usable again.
        try store.commit([.token(TokenBuilder.record(id: lost))])
        #expect(try StoreFixtures.tokens(in: store).count == 2)
    }

    @Test func aBrokenConnectionIsReopenedOnTheNextCommit() throws {
        let (url, store) = try migratedStore()
        try store.commit([.token(TokenBuilder.record())])
        let pid = try store.connection.execute("SELECT pg_backend_pid()").text(0, 0)
        let other = try PostgresConnection(url: url)
        try other.execute("SELECT pg_terminate_backend(\(pid))")
        // The writer retries a failed commit; the first attempt may find the connection dead.
        let id = UUID().uuidString.lowercased()
        var committed = false
        for _ in 0..<3 where !committed {
            committed = (try? store.commit([.token(TokenBuilder.record(id: id))])) != nil
        }
        #expect(committed)
        #expect(try StoreFixtures.tokens(in: store).contains { $0.externalPurchaseId == id })
        #expect(try store.connection.execute("SHOW synchronous_commit").text(0, 0) == "on", "set again after reconnecting")
    }

    @Test func commitsAreSynchronousWhateverTheDatabaseDefault() throws {
        let url = try PostgresServer.createDatabase()
        _ = try PostgresTokenStore.migrate(url: url)
        let name = String(url.split(separator: "/").last!)
        try PostgresConnection(url: url).execute("ALTER DATABASE \(name) SET synchronous_commit = off")
        let store = try PostgresTokenStore(url: url)
        #expect(try store.connection.execute("SHOW synchronous_commit").text(0, 0) == "on")
    }

    @Test func migrateIsIdempotent() throws {
        let url = try PostgresServer.createDatabase()
        let first = try PostgresTokenStore.migrate(url: url)
        #expect(first.applied == Array(1...PostgresTokenStore.schemaVersion))
        #expect(first.version == PostgresTokenStore.schemaVersion)
        let second = try PostgresTokenStore.migrate(url: url)
        #expect(second.applied.isEmpty)
        #expect(second.version == PostgresTokenStore.schemaVersion)
        let rows = try PostgresConnection(url: url).execute("SELECT version FROM linkout_schema ORDER BY version")
        #expect(rows.rowCount == PostgresTokenStore.schemaVersion)
    }

    /// A database migrated by the linkout before the dashboard (version 5), with a token in it: migrate
    /// applies 6 to 8, the token stays, and the next batch is counted in the buckets and the hours.
    @Test func aVersionFiveDatabaseGainsTheDashboardTables() throws {
        let url = try PostgresServer.createDatabase()
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        #expect(try PostgresMigrations.migrate(connection, upTo: 5) == [1, 2, 3, 4, 5])
        try connection.execute(
            """
            INSERT INTO tokens (external_purchase_id, app_apple_id, bundle_id, token_creation_date, environment, link,
                country, destination, first_seen, last_seen, hits, stale)
            VALUES ('old', 1, 'com.example', 5, 'production', 'nl', 'nl', 'https://a/', 10, 10, 1, false)
            """)
        #expect(throws: StoreError.self) { try PostgresTokenStore(url: url) }
        let migrated = try PostgresTokenStore.migrate(url: url)
        #expect(migrated.applied == Array(6...PostgresTokenStore.schemaVersion) && migrated.version == PostgresTokenStore.schemaVersion)
        let store = try PostgresTokenStore(url: url)
        try store.commit(
            [.token(TokenBuilder.record(id: "new", seenAt: 600_000))], batch: BatchIdentity(instance: "t", sequence: 1),
            extras: DashboardExtras(), now: StoreFixtures.appliedAt)
        #expect(try StoreFixtures.tokens(in: store).map(\.externalPurchaseId).sorted() == ["new", "old"])
        let buckets = try connection.execute("SELECT bucket_start, sum(visits) FROM visit_buckets GROUP BY 1")
        #expect(buckets.rowCount == 1 && buckets.text(0, 0) == "600000" && buckets.text(0, 1) == "1")
        let hours = try connection.execute("SELECT bucket_start, sum(visits) FROM visit_hours GROUP BY 1")
        #expect(hours.rowCount == 1 && hours.text(0, 0) == "0" && hours.text(0, 1) == "1")
    }

    @Test func aSchemaBehindIsRefusedWithTheCommandToRun() throws {
        let url = try PostgresServer.createDatabase()
        let error = try #require(throws: StoreError.self) { try PostgresTokenStore(url: url) }
        #expect(error.message.contains("version 0"))
        #expect(error.message.contains("linkout store migrate --store postgres://linkout@127.0.0.1:"))
    }

    @Test func aSchemaAheadIsRefused() throws {
        let (url, _) = try migratedStore()
        try PostgresConnection(url: url).execute("INSERT INTO linkout_schema (version) VALUES (99)")
        let error = try #require(throws: StoreError.self) { try PostgresTokenStore(url: url) }
        #expect(error.message.contains("version 99"))
        #expect(error.message.contains("upgrade linkout"))
        #expect(throws: StoreError.self) { try PostgresTokenStore.migrate(url: url) }
    }

    @Test func twoProcessesMigratingAtOnceApplyEachMigrationOnce() throws {
        let url = try PostgresServer.createDatabase()
        let results = Results()
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do { results.add(.success(try PostgresTokenStore.migrate(url: url).applied)) } catch { results.add(.failure(error)) }
            }
        }
        group.wait()
        let outcomes = results.all
        #expect(outcomes.count == 4)
        let applied = try outcomes.flatMap { try $0.get() }
        #expect(applied.sorted() == Array(1...PostgresTokenStore.schemaVersion))
        _ = try PostgresTokenStore(url: url)
    }

    @Test func passwordsStayOutOfErrors() throws {
        let server = try PostgresServer.shared()
        // Nothing listens on port 1; the error names the URL without its password.
        let url = "postgres://linkout:hunter2@127.0.0.1:1/nothing?connect_timeout=2&password=hunter3"
        let error = try #require(throws: StoreError.self) { try PostgresTokenStore(url: url) }
        #expect(!error.description.contains("hunter"))
        #expect(error.description.contains("postgres://linkout:***@127.0.0.1:1/nothing"))
        _ = server
    }
}

private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Result<[Int], any Error>] = []
    func add(_ item: Result<[Int], any Error>) {
        lock.lock()
        items.append(item)
        lock.unlock()
    }
    var all: [Result<[Int], any Error>] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}
