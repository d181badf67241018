import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

@Suite struct SQLiteTokenStoreTests {
    @Test func repeatVisitsMergeIntoOneRow() throws {
        try StoreFixtures.expectRepeatVisitsMerged(try SQLiteTokenStore(path: StoreFixtures.temporaryPath()))
    }

    @Test func onlyShoppersVisitsAreHitsAndTheFirstVisitsExperimentIsKept() throws {
        let store = try SQLiteTokenStore(path: StoreFixtures.temporaryPath())
        let id = "11111111-2222-3333-4444-555555555555"
        try store.commit([
            .token(TokenBuilder.record(id: id, seenAt: 1_000, kind: .prefetch, experiment: "price-test", variant: "b")),
            .token(TokenBuilder.record(id: id, seenAt: 2_000, kind: .shopper, experiment: "price-test", variant: "b")),
        ])
        try store.commit([
            .token(TokenBuilder.record(id: id, seenAt: 3_000, kind: .bot)),
            .token(TokenBuilder.record(id: id, seenAt: 4_000, kind: .head)),
            .token(TokenBuilder.record(id: id, seenAt: 5_000)),
        ])
        let token = try #require(try StoreFixtures.tokens(in: store).first)
        #expect(token.hits == 2)
        #expect(token.otherVisits == 3)
        #expect(token.firstSeen == 1_000 && token.lastSeen == 5_000)
        #expect(token.experiment == "price-test" && token.variant == "b")
        try store.commit([
            .untokened(
                UntokenedVisit(link: "nl", country: "nl", destination: "https://a/", reason: .refused(.missingToken), seenAt: 1, kind: .bot)
            )
        ])
        #expect(try store.connection.integer("SELECT count(*) FROM untokened_visits WHERE kind = 'bot'") == 1)
    }

    @Test func theFirstShoppersVisitGivesTheFields() throws {
        try StoreFixtures.expectShopperFieldsWin(try SQLiteTokenStore(path: StoreFixtures.temporaryPath()))
    }

    @Test func versionTwoStoresGainKindsAndExperimentsInPlace() throws {
        let path = StoreFixtures.temporaryPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        do {
            // Version 2 as it shipped: visits, the view over them, untokened visits.
            let connection = try SQLiteConnection(path: path, readOnly: false)
            try connection.execute(
                """
                CREATE TABLE visits (id INTEGER PRIMARY KEY, external_purchase_id TEXT NOT NULL, app_apple_id INTEGER NOT NULL,
                    bundle_id TEXT NOT NULL, token_creation_date INTEGER NOT NULL, token_type TEXT, token_expiration_date INTEGER,
                    environment TEXT NOT NULL, link TEXT NOT NULL, country TEXT NOT NULL, destination TEXT NOT NULL,
                    first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, hits INTEGER NOT NULL, stale INTEGER NOT NULL);
                CREATE VIEW tokens AS SELECT v.external_purchase_id, merged.hits FROM (SELECT min(id) AS first_visit,
                    sum(hits) AS hits FROM visits GROUP BY external_purchase_id) AS merged JOIN visits AS v ON v.id = merged.first_visit;
                CREATE TABLE untokened_visits (id INTEGER PRIMARY KEY, link TEXT NOT NULL, country TEXT NOT NULL,
                    destination TEXT NOT NULL, reason TEXT NOT NULL, seen_at INTEGER NOT NULL);
                INSERT INTO visits VALUES (1, 'b', 1, 'com.example', 5, NULL, NULL, 'production', 'nl', 'nl', 'https://a/', 10, 30, 3, 1);
                INSERT INTO untokened_visits VALUES (1, 'nl', 'nl', 'https://a/', 'missing_token', 7);
                PRAGMA user_version = 2;
                """)
        }
        #expect(throws: StoreError.self) { try SQLiteTokenStore(readingFrom: path) }
        let store = try SQLiteTokenStore(path: path)
        try store.commit([.token(TokenBuilder.record(id: "b", seenAt: 40, kind: .prefetch))])
        let token = try #require(try StoreFixtures.tokens(in: store).first)
        #expect(token.hits == 3, "visits from before were all shoppers'")
        #expect(token.otherVisits == 1)
        #expect(token.firstSeen == 10 && token.lastSeen == 40 && token.stale)
        #expect(token.experiment == nil)
        #expect(try store.untokenedVisitCount() == 1)
        #expect(try store.connection.integer("PRAGMA user_version") == SQLiteTokenStore.schemaVersion)
    }

    /// Version 5 is version 6 without the dashboard's three tables (and version 7's first shoppers): a store
    /// left by the linkout before the dashboard keeps its visits, gains the tables, and counts the next batch
    /// (not the visits before).
    @Test func versionFiveStoresGainTheDashboardTablesInPlace() throws {
        let path = StoreFixtures.temporaryPath()
        do {
            let store = try SQLiteTokenStore(path: path)
            try store.commit([.token(TokenBuilder.record(id: "old", seenAt: 10))])
            try store.connection.execute(
                """
                DROP TABLE visit_buckets; DROP TABLE refusal_buckets; DROP TABLE destination_health;
                \(StoreFixtures.undoSchemaSeven)
                PRAGMA user_version = 5;
                """)
            store.close()
        }
        #expect(throws: StoreError.self) { try SQLiteTokenStore(readingFrom: path) }
        let store = try SQLiteTokenStore(path: path)
        #expect(try store.connection.integer("PRAGMA user_version") == SQLiteTokenStore.schemaVersion)
        try store.commit(
            [.token(TokenBuilder.record(id: "new", seenAt: 600_000))], batch: BatchIdentity(instance: "t", sequence: 1),
            extras: DashboardExtras(), now: StoreFixtures.appliedAt)
        #expect(try StoreFixtures.tokens(in: store).map(\.externalPurchaseId) == ["old", "new"])
        #expect(try store.connection.integer("SELECT count(*) FROM visit_buckets") == 1)
        #expect(try store.connection.integer("SELECT sum(visits) FROM visit_buckets WHERE bucket_start = 600000") == 1)
    }

    /// The writer retries a batch whose commit was reported failed; if that commit did reach the disk, the
    /// batch's identity, committed with it, makes the retry a no-op.
    @Test func aBatchRetriedAfterItLandedCountsOnce() throws {
        let store = try SQLiteTokenStore(path: StoreFixtures.temporaryPath())
        defer { store.close() }
        let id = UUID().uuidString.lowercased()
        let batch = BatchIdentity(instance: "instance", sequence: 1)
        let visits: [VisitRecord] = [
            .token(TokenBuilder.record(id: id)),
            .untokened(UntokenedVisit(link: "nl", country: "nl", destination: "https://a/", reason: .refused(.missingToken), seenAt: 1)),
        ]
        try store.commit(visits, batch: batch, now: StoreFixtures.appliedAt)
        try store.commit(visits, batch: batch, now: StoreFixtures.appliedAt)
        #expect(try StoreFixtures.tokens(in: store).map(\.hits) == [1])
        #expect(try store.untokenedVisitCount() == 1)
        try store.commit(visits, batch: BatchIdentity(instance: "instance", sequence: 2), now: StoreFixtures.appliedAt)
        #expect(try StoreFixtures.tokens(in: store).map(\.hits) == [2])
        #expect(try store.untokenedVisitCount() == 2)
    }

    /// Batch identities are kept 7 days of the writer's time, pruned at most once an hour of it: the times
    /// are the commits' own, so a week passes here without waiting for one.
    @Test func batchIdentitiesArePrunedAWeekAfterTheyWereApplied() throws {
        let store = try SQLiteTokenStore(path: StoreFixtures.temporaryPath())
        defer { store.close() }
        let minute: Int64 = 60_000, week = 7 * 24 * 60 * minute, start = StoreFixtures.appliedAt
        func kept() throws -> [Int64] {
            try (1...5).filter { try store.connection.integer("SELECT count(*) FROM applied_batches WHERE sequence = \($0)") == 1 }
        }
        func commit(_ sequence: Int64, at now: Int64) throws {
            try store.commit([.token(TokenBuilder.record())], batch: BatchIdentity(instance: "instance", sequence: sequence), now: now)
        }
        try commit(1, at: start)
        try commit(2, at: start + 30 * minute)
        // A week after batch 1: it goes, batch 2 is younger.
        try commit(3, at: start + week + 1)
        #expect(try kept() == [2, 3])
        // Batch 2 is a week old now, but the last prune was within the hour.
        try commit(4, at: start + week + 40 * minute)
        #expect(try kept() == [2, 3, 4])
        try commit(5, at: start + week + 60 * minute + 1)
        #expect(try kept() == [3, 4, 5])
    }

    @Test func recordsSurviveReopeningAndExportInFirstSeenOrder() throws {
        let path = StoreFixtures.temporaryPath()
        let ids = (0..<50).map { _ in UUID().uuidString.lowercased() }
        do {
            let store = try SQLiteTokenStore(path: path)
            try store.commit(ids.map { .token(TokenBuilder.record(id: $0)) })
            try store.commit([.token(TokenBuilder.record(id: "SANDBOX_" + ids[0], type: .acquisition))])
            store.close()
        }
        let reader = try SQLiteTokenStore(readingFrom: path)
        let tokens = try StoreFixtures.tokens(in: reader)
        #expect(tokens.map(\.externalPurchaseId) == ids + ["SANDBOX_" + ids[0]])
        #expect(tokens.last?.environment == "sandbox")
        #expect(tokens.last?.tokenType == "ACQUISITION")
        #expect(tokens.last?.tokenExpirationDate == 9_000)
    }

    @Test func untokenedVisitsAreKeptApart() throws {
        let store = try SQLiteTokenStore(path: StoreFixtures.temporaryPath())
        try store.commit([
            .untokened(
                UntokenedVisit(link: "nl", country: "nl", destination: "https://a.example.com/", reason: .refused(.missingToken), seenAt: 1)
            )
        ])
        #expect(try store.untokenedVisitCount() == 1)
        #expect(try StoreFixtures.tokens(in: store).isEmpty)
    }

    @Test func readingAMissingStoreFailsWithoutCreatingIt() throws {
        let path = StoreFixtures.temporaryPath()
        #expect(throws: StoreError.self) { try SQLiteTokenStore(readingFrom: path) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aNewerSchemaIsRefused() throws {
        let path = StoreFixtures.temporaryPath()
        do {
            let store = try SQLiteTokenStore(path: path)
            store.close()
        }
        let connection = try SQLiteConnection(path: path, readOnly: false)
        try connection.execute("PRAGMA user_version = 99")
        #expect(throws: StoreError.self) { try SQLiteTokenStore(path: path) }
        #expect(throws: StoreError.self) { try SQLiteTokenStore(readingFrom: path) }
    }

    @Test func storeRunsInWALWithFullSync() throws {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteTokenStore(path: path)
        try store.commit([.token(TokenBuilder.record())])
        let connection = try SQLiteConnection(path: path, readOnly: true)
        let mode = try connection.prepare("PRAGMA journal_mode")
        #expect(try mode.step())
        #expect(mode.text(0) == "wal")
        // FULL (2) is the writer connection's own setting, so ask that connection.
        #expect(try store.connection.integer("PRAGMA synchronous") == 2)
        _ = store
    }

    /// Under a writer that never pauses, the WAL must still start over (SQLiteCheckpointer says why).
    /// The checkpointer's round is run by hand, with a reader holding it to the frames committed before one
    /// batch, as a round that ran during that batch's commit would be held: without the writer's catch-up,
    /// that batch's frames are never copied before the next commit, and the WAL grows on.
    @Test func theWALStartsOverAfterARoundThatMissedABatch() throws {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteTokenStore(path: path, checkpointsInBackground: false)
        defer { store.close() }
        let checkpointer = try #require(store.checkpointer)
        // Past the 1,000 frames from which a round asks the writer to catch up (a frame: 24 bytes + a page).
        let pageSize = try store.connection.integer("PRAGMA page_size")
        var batches = 0
        func commitBatch() throws {
            try store.commit((0..<20).map { _ in .token(TokenBuilder.record()) })
            batches += 1
        }
        while try Self.walSize(path) < 32 + 1_100 * (24 + pageSize) { try commitBatch() }

        let reader = try SQLiteConnection(path: path, readOnly: true)
        try reader.execute("BEGIN")
        _ = try reader.integer("SELECT count(*) FROM visits")
        try commitBatch()
        checkpointer.checkpoint()
        try reader.execute("COMMIT")

        let sequence = try Self.walCheckpointSequence(path)
        let sizeBefore = try Self.walSize(path)
        try commitBatch()
        #expect(try Self.walCheckpointSequence(path) == sequence &+ 1, "the WAL did not start over")
        #expect(try Self.walSize(path) == sizeBefore, "the batch was appended, not written over the first frames")
        #expect(try StoreFixtures.tokens(in: store).count == 20 * batches)
    }

    private static func walSize(_ path: String) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: path + "-wal")
        return try #require(attributes[.size] as? Int64)
    }

    /// The WAL header's checkpoint sequence number (big-endian, bytes 12-15), which SQLite increments each
    /// time the WAL starts over from its first frame.
    private static func walCheckpointSequence(_ path: String) throws -> UInt32 {
        let wal = try #require(FileHandle(forReadingAtPath: path + "-wal"))
        defer { try? wal.close() }
        let header = try #require(try wal.read(upToCount: 16))
        try #require(header.count == 16)
        return header.suffix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }
}

@Suite struct SQLiteSchemaUpgradeTests {
    /// A store written by schema version 1 (one merged row per token) keeps every token, with its hits,
    /// when this version opens it.
    @Test func versionOneStoresAreUpgradedInPlace() throws {
        let path = StoreFixtures.temporaryPath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        do {
            let connection = try SQLiteConnection(path: path, readOnly: false)
            try connection.execute(
                """
                CREATE TABLE tokens (external_purchase_id TEXT NOT NULL PRIMARY KEY, app_apple_id INTEGER NOT NULL,
                    bundle_id TEXT NOT NULL, token_creation_date INTEGER NOT NULL, token_type TEXT, token_expiration_date INTEGER,
                    environment TEXT NOT NULL, link TEXT NOT NULL, country TEXT NOT NULL, destination TEXT NOT NULL,
                    first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, hits INTEGER NOT NULL, stale INTEGER NOT NULL);
                CREATE TABLE untokened_visits (id INTEGER PRIMARY KEY, link TEXT NOT NULL, country TEXT NOT NULL,
                    destination TEXT NOT NULL, reason TEXT NOT NULL, seen_at INTEGER NOT NULL);
                INSERT INTO tokens VALUES ('b', 1, 'com.example', 5, NULL, NULL, 'production', 'nl', 'nl', 'https://a/', 10, 30, 3, 1);
                INSERT INTO tokens VALUES ('a', 1, 'com.example', 5, 'SERVICES', 99, 'sandbox', 'de', 'de', 'https://b/', 20, 20, 1, 0);
                PRAGMA user_version = 1;
                """)
        }
        #expect(throws: StoreError.self) { try SQLiteTokenStore(readingFrom: path) }
        let store = try SQLiteTokenStore(path: path)
        try store.commit([.token(TokenBuilder.record(id: "b", seenAt: 40))])
        let tokens = try StoreFixtures.tokens(in: store)
        #expect(tokens.map(\.externalPurchaseId) == ["b", "a"])
        #expect(tokens[0].hits == 4 && tokens[0].firstSeen == 10 && tokens[0].lastSeen == 40 && tokens[0].stale)
        #expect(tokens[1].tokenType == "SERVICES" && tokens[1].environment == "sandbox" && tokens[1].hits == 1)
    }
}
