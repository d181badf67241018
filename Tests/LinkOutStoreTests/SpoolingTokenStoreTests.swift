import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

/// The outage spool in front of a real PostgreSQL (LinkOutTestSupport/PostgresServer.swift), with the replay driven
/// by hand: a crash between a batch's PostgreSQL commit and its removal from the spool counts nothing twice.
@Suite struct SpoolingTokenStoreTests {
    private struct Crash: Error {}

    private func migratedURL() throws -> String {
        let url = try PostgresServer.createDatabase()
        _ = try PostgresTokenStore.migrate(url: url)
        return url
    }

    private func open(_ url: String, spool: String) throws -> SpoolingTokenStore {
        try SpoolingTokenStore(url: url, spoolPath: spool, timeoutMs: 2000, replayBatchSize: 10, replayInBackground: false)
    }

    /// Replays until the spool is empty.
    private func drain(_ store: SpoolingTokenStore) throws {
        while try store.replayer.replayPass() > 0 {}
    }

    private func hits(_ url: String) throws -> [String: Int64] {
        let reader = try PostgresTokenStore(url: url)
        defer { reader.close() }
        var hits: [String: Int64] = [:]
        try reader.forEachToken { hits[$0.externalPurchaseId] = $0.hits }
        return hits
    }

    @Test func aCrashBetweenThePostgresCommitAndTheSpoolDeleteCountsNothingTwice() throws {
        let url = try migratedURL()
        let spool = StoreFixtures.temporaryPath()
        var store = try open(url, spool: spool)
        store.enterOutage(StoreError("test", "forced outage"))
        #expect(store.outageStatus.spooling)

        // 25 visits of 8 ids, in three batches, and 3 untokened visits.
        let ids = (0..<8).map { _ in UUID().uuidString.lowercased() }
        var expected: [String: Int64] = [:]
        var batch: [VisitRecord] = []
        for index in 0..<25 {
            let id = ids[(index * 5) % ids.count]
            expected[id, default: 0] += 1
            batch.append(.token(TokenBuilder.record(id: id, seenAt: Int64(1_000 + index))))
            if batch.count == 9 || index == 24 {
                try store.commit(batch)
                batch = []
            }
        }
        let untokened = UntokenedVisit(
            link: "nl", country: "nl", destination: "https://a.example.com/", reason: .refused(.missingToken), seenAt: 5)
        try store.commit([.untokened(untokened), .untokened(untokened), .untokened(untokened)])
        #expect(store.outageStatus.spooledVisits == 28)
        #expect(try hits(url).isEmpty, "nothing reached PostgreSQL while spooling")

        // The first batch (10 visits) reaches PostgreSQL, then the process "dies" before clearing it.
        store.replayer.afterPostgresCommit = { throw Crash() }
        #expect(throws: Crash.self) { try store.replayer.replayPass() }
        #expect(try hits(url).values.reduce(0, +) == 10)
        store.close()

        // Restarted: the batch is still spooled, and is cleared without being counted again.
        store = try open(url, spool: spool)
        #expect(store.outageStatus.spooledVisits == 28)
        try drain(store)
        #expect(store.outageStatus.spooledVisits == 0)
        #expect(try hits(url) == expected)
        #expect(try PostgresTokenStore(url: url).untokenedVisitCount() == 3)

        // The drained spool starts its row ids again from 1: under a new stream id, so they still count.
        let late = UUID().uuidString.lowercased()
        store.enterOutage(StoreError("test", "forced outage"))
        try store.commit([.token(TokenBuilder.record(id: late)), .token(TokenBuilder.record(id: ids[0]))])
        try drain(store)
        expected[late] = 1
        expected[ids[0], default: 0] += 1
        #expect(try hits(url) == expected)
        store.close()
    }

    /// A batch whose PostgreSQL COMMIT landed but was reported failed gets spooled with its identity; the
    /// replay finds the identity in PostgreSQL and clears the spooled copy without counting it. A batch with
    /// another identity, spooled beside it (in the same replay batch), still counts.
    @Test func aBatchThatLandedAndWasSpooledIsReplayedWithoutCountingIt() throws {
        let url = try migratedURL()
        let spool = StoreFixtures.temporaryPath()
        let store = try open(url, spool: spool)
        defer { store.close() }
        let id = UUID().uuidString.lowercased(), other = UUID().uuidString.lowercased()
        // An instance id with the characters an array literal would trip on (linkout's own are UUIDs).
        let instance = #"test, "instance" \ {}"#
        let landed = BatchIdentity(instance: instance, sequence: 7)
        let visits: [VisitRecord] = [.token(TokenBuilder.record(id: id)), .token(TokenBuilder.record(id: id, kind: .bot))]
        // The writer's direct commit, whose acknowledgement "was lost".
        let direct = try PostgresTokenStore(url: url)
        try direct.commit(visits, batch: landed, now: StoreFixtures.appliedAt)
        direct.close()
        store.enterOutage(StoreError("test", "lost acknowledgement"))
        try store.commit(visits, batch: landed, now: StoreFixtures.appliedAt)
        try store.commit(
            [.token(TokenBuilder.record(id: other))], batch: BatchIdentity(instance: instance, sequence: 8), now: StoreFixtures.appliedAt)
        // A retry of the spool commit itself is recognised by the spool.
        try store.commit(
            [.token(TokenBuilder.record(id: other))], batch: BatchIdentity(instance: instance, sequence: 8), now: StoreFixtures.appliedAt)
        #expect(store.outageStatus.spooledVisits == 4)
        try drain(store)
        #expect(try hits(url) == [id: 1, other: 1])
        let reader = try PostgresTokenStore(url: url)
        var otherVisits: [String: Int64] = [:]
        try reader.forEachToken { otherVisits[$0.externalPurchaseId] = $0.otherVisits }
        reader.close()
        #expect(otherVisits == [id: 1, other: 0])
    }

    /// A spool written by a build from before unknown token types were accepted holds the reason
    /// `unknown_token_type`: after the upgrade it must still replay (as `invalid_token_type`), not stop
    /// the replay at that row forever.
    /// A tap spooled during an outage reaches PostgreSQL as a tap: reason `tap` in `untokened_visits` and,
    /// since this one is a HEAD (no shopper, so no `Tap`), kind `tap-bot` in the dashboard's buckets, beside a
    /// refusal sent on, which keeps its code.
    @Test func aSpooledTapIsReplayedAsATap() throws {
        let url = try migratedURL()
        let spool = StoreFixtures.temporaryPath()
        let store = try open(url, spool: spool)
        defer { store.close() }
        store.enterOutage(StoreError("test", "PostgreSQL is down"))
        try store.commit([
            .untokened(
                UntokenedVisit(
                    link: "us", country: "us", destination: "https://a.example.com/us", reason: .tap, seenAt: 1_800_000_000_000, kind: .head
                )),
            .untokened(
                UntokenedVisit(
                    link: "nl", country: "nl", destination: "https://a.example.com/", reason: .refused(.missingToken),
                    seenAt: 1_800_000_000_000)),
        ])
        let spooled = try SQLiteConnection(path: spool, readOnly: true)
        #expect(try spooled.integer("SELECT count(*) FROM untokened_visits WHERE reason = 'tap' AND kind = 'head'") == 1)
        try drain(store)
        #expect(store.outageStatus.spooledVisits == 0)
        let postgres = try PostgresConnection(url: url)
        let rows = try postgres.execute("SELECT link, reason, kind, seen_at FROM untokened_visits ORDER BY link DESC")
        #expect(rows.rowCount == 2)
        #expect([rows.text(0, 0), rows.text(0, 1), rows.text(0, 2)] == ["us", "tap", "head"])
        #expect(rows.text(1, 1) == "missing_token")
        let buckets = try postgres.execute("SELECT link, kind, visits FROM visit_buckets ORDER BY link DESC")
        #expect(buckets.rowCount == 2)
        #expect([buckets.text(0, 0), buckets.text(0, 1), buckets.text(0, 2)] == ["us", "tap-bot", "1"])
        #expect([buckets.text(1, 0), buckets.text(1, 1)] == ["nl", "untokened"])
    }

    @Test func aSpoolFromBeforeTheReasonWasRenamedStillReplays() throws {
        let url = try migratedURL()
        let spool = StoreFixtures.temporaryPath()
        let store = try open(url, spool: spool)
        defer { store.close() }
        store.enterOutage(StoreError("test", "PostgreSQL is down"))
        try store.commit([
            .untokened(
                UntokenedVisit(
                    link: "nl", country: "nl", destination: "https://a.example.com/", reason: .refused(.invalidTokenType), seenAt: 1))
        ])
        let older = try SQLiteConnection(path: spool, readOnly: false)
        try older.execute("UPDATE untokened_visits SET reason = 'unknown_token_type'")
        #expect(try older.integer("SELECT count(*) FROM untokened_visits WHERE reason = 'unknown_token_type'") == 1)
        try drain(store)
        #expect(store.outageStatus.spooledVisits == 0)
        let postgres = try PostgresConnection(url: url)
        let reasons = try postgres.execute("SELECT reason FROM untokened_visits")
        #expect(reasons.rowCount == 1)
        #expect(reasons.rowCount == 1 && reasons.text(0, 0) == "invalid_token_type")
    }

    @Test func aSchemaNewerThanThisBuildIsRefusedNotSpooledThrough() throws {
        let url = try migratedURL()
        let other = try PostgresConnection(url: url)
        _ = try other.execute("INSERT INTO linkout_schema (version) VALUES (\(PostgresTokenStore.schemaVersion + 1))")
        #expect {
            _ = try open(url, spool: StoreFixtures.temporaryPath())
        } throws: { error in
            (error as? StoreError)?.kind == .schemaMismatch
        }
    }

    @Test func anUnreachablePostgresAtStartSpoolsAndReportsIt() throws {
        let spool = StoreFixtures.temporaryPath()
        // Nothing listens on port 1.
        let store = try SpoolingTokenStore(
            url: "postgres://linkout@127.0.0.1:1/nothing", spoolPath: spool, timeoutMs: 500, replayInBackground: false)
        defer { store.close() }
        #expect(store.outageStatus.spooling)
        #expect(store.outageStatus.degraded)
        try store.commit([.token(TokenBuilder.record())])
        #expect(store.outageStatus.spooledVisits == 1)
        #expect(throws: (any Error).self) { try store.replayer.replayPass() }
        #expect(store.outageStatus.spooledVisits == 1)
    }

    @Test func aSpoolHoldingVisitsForAnotherStoreIsRefused() throws {
        let spool = StoreFixtures.temporaryPath()
        let first = try SpoolingTokenStore(
            url: "postgres://linkout@127.0.0.1:1/one", spoolPath: spool, timeoutMs: 500, replayInBackground: false)
        try first.commit([.token(TokenBuilder.record())])
        first.close()
        let error = try #require(throws: StoreError.self) {
            try SpoolingTokenStore(url: "postgres://linkout@127.0.0.1:1/two", spoolPath: spool, timeoutMs: 500, replayInBackground: false)
        }
        #expect(error.message.contains("holds 1 visits for postgres://linkout@127.0.0.1:1/one"))
    }

    @Test func aStatementPastTheTimeoutFailsWithinIt() throws {
        let url = try migratedURL()
        let store = try PostgresTokenStore(url: url, timeoutMs: 300)
        let started = Date()
        #expect(throws: StoreError.self) { try store.connection.execute("SELECT pg_sleep(5)") }
        #expect(Date().timeIntervalSince(started) < 2)
        // The connection still works afterwards.
        try store.commit([.token(TokenBuilder.record())])
        #expect(try store.connection.execute("SHOW statement_timeout").text(0, 0) == "300ms")
    }
}
