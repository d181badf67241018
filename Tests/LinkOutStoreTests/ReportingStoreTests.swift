import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

/// The reporting side of both stores, driven directly: what is planned when, leases, outcomes, and on
/// PostgreSQL, two connections sharing the outbox. One set of statements serves both stores, so every
/// test runs on each.
@Suite struct ReportingStoreTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    static let hour: Int64 = 3_600_000
    static let now: Int64 = 1_800_000_000_000
    static let window = 72 * hour

    /// A writer store and a way to open reporting connections on the same data.
    struct Stores {
        let writer: any TokenStore
        let open: () throws -> SQLReportingStore
    }

    func stores(_ kind: Kind) throws -> Stores {
        switch kind {
        case .sqlite:
            let path = StoreFixtures.temporaryPath()
            let writer = try SQLiteTokenStore(path: path)
            return Stores(writer: writer) { try SQLReportingStore(sqlitePath: path) }
        case .postgres:
            let url = try PostgresServer.createDatabase()
            _ = try PostgresTokenStore.migrate(url: url)
            return Stores(writer: try PostgresTokenStore(url: url)) { try SQLReportingStore(postgresURL: url) }
        }
    }

    /// Records a visit of a new token created `ageHours` before `now`; returns its id.
    @discardableResult
    func record(_ writer: any TokenStore, ageHours: Int64, sandbox: Bool = false) throws -> String {
        let id = (sandbox ? "SANDBOX_" : "") + UUID().uuidString.lowercased()
        let token = ExternalPurchaseToken(
            appAppleId: 1234567890, bundleId: "com.example", tokenCreationDate: Self.now - ageHours * Self.hour, externalPurchaseId: id)
        try writer.commit([
            .token(TokenRecord(token: token, link: "nl", country: "nl", destination: "https://a.example/", seenAt: Self.now, stale: false))
        ])
        return id
    }

    func plan(_ store: SQLReportingStore, at now: Int64 = now, gatherMs: Int64 = 0) throws -> Int {
        try store.planReports(now: now, noPurchaseAfterMs: Self.window, gatherMs: gatherMs)
    }

    /// A one-time buy's JSON as the intake stores it.
    func line(_ id: String, net: Int64 = 2470) -> String {
        #"{"lineItemId":"\#(id)","creationDate":\#(Self.now),"eventType":"BUY","productType":"ONE_TIME_BUY","productIdentifier":"p","quantity":1,"pricingCurrency":"EUR","reportingCurrency":"EUR","amountTaxExclusive":2470,"amountTaxInclusive":2990,"netAmountTaxExclusive":\#(net),"taxAmount":520,"taxCountry":"NLD"}"#
    }

    func store(_ store: SQLReportingStore, _ id: String, _ lines: [(String, String)], at now: Int64 = now) throws -> LineItemStoreResult {
        try store.storeLineItems(externalPurchaseId: id, lineItemIds: lines.map(\.0), now: now) { _, _ in
            lines.map { LineItemWrite(lineItemId: $0.0, json: $0.1) }
        }
    }

    @Test(arguments: Kind.allCases)
    func aQuietTokenIsPlannedNoLineItemOnceItsWindowHasPassed(_ kind: Kind) throws {
        let stores = try stores(kind)
        let old = try record(stores.writer, ageHours: 73)
        try record(stores.writer, ageHours: 71)
        let reporting = try stores.open()
        #expect(try plan(reporting) == 1)
        #expect(try plan(reporting) == 0, "one open report per token")
        let claimed = try reporting.claimReports(now: Self.now, leaseMs: 10_000, limit: 10)
        #expect(claimed.map(\.externalPurchaseId) == [old])
        #expect(claimed.first?.status == "NO_LINE_ITEM" && claimed.first?.attempts == 1)
        #expect(claimed.first?.body.contains(#""status":"NO_LINE_ITEM""#) == true)
        #expect(claimed.first?.body.contains("lineItems") == false)
    }

    @Test(arguments: Kind.allCases)
    func aLeaseKeepsAReportFromOtherSendersUntilItRunsOut(_ kind: Kind) throws {
        let stores = try stores(kind)
        try record(stores.writer, ageHours: 100)
        let reporting = try stores.open()
        _ = try plan(reporting)
        let first = try reporting.claimReports(now: Self.now, leaseMs: 10_000, limit: 10)
        #expect(first.count == 1)
        #expect(try reporting.claimReports(now: Self.now + 9_999, leaseMs: 10_000, limit: 10).isEmpty)
        let again = try reporting.claimReports(now: Self.now + 10_000, leaseMs: 10_000, limit: 10)
        #expect(again.map(\.requestIdentifier) == first.map(\.requestIdentifier))
        #expect(again.first?.attempts == 2)
        #expect(again.first?.failures == 0, "a lease that ran out (its sender stopped) is not Apple's failure")
        #expect(again.first?.body == first.first?.body, "a resend is the same report")
    }

    /// What `report status` shows of the outbox: one count for each state, the same in the tokens' table and
    /// the outbox's line, and why each report waits.
    @Test(arguments: Kind.allCases)
    func theOutboxSaysWhatWaitsAndWhyWithTheTokensCounts(_ kind: Kind) throws {
        let stores = try stores(kind)
        let failing = try record(stores.writer, ageHours: 100)
        let refusedKey = try record(stores.writer, ageHours: 100)
        let held = try record(stores.writer, ageHours: 100)
        let notSent = try record(stores.writer, ageHours: 100)
        let reporting = try stores.open()
        #expect(try plan(reporting) == 4)
        let claimed = Dictionary(
            uniqueKeysWithValues: try reporting.claimReports(now: Self.now, leaseMs: 10_000, limit: 10).map { ($0.externalPurchaseId, $0) })
        try reporting.finish(
            try #require(claimed[failing]), .retry(nextAttemptAt: Self.now + 20_000, answer: "no answer: Could not connect", status: nil),
            now: Self.now)
        try reporting.finish(
            try #require(claimed[refusedKey]), .unauthorized(nextAttemptAt: Self.now + 300_000, answer: "HTTP 401 ", status: 401),
            now: Self.now)
        try reporting.finish(try #require(claimed[notSent]), .notSent(nextAttemptAt: Self.now + 300_000), now: Self.now)
        // `held` stays leased: its sender is sending it now.

        let summary = try reporting.status(now: Self.now + 1_000, noPurchaseAfterMs: Self.window, gatherMs: 0)
        let row = try #require(summary.rows.first)
        let health = summary.health
        #expect(row.sending == 1 && row.retrying == 2 && row.due == 1, "\(row)")
        #expect(health.sending == row.sending && health.retrying == row.retrying && health.toSend == 1, "\(health)")
        #expect(health.pausedUntil == Self.now + 300_000)
        #expect(health.nextTryAt == Self.now + 20_000)
        #expect(health.lastError?.externalPurchaseId == failing || health.lastError?.externalPurchaseId == refusedKey)
        #expect(
            health.waiting.map(\.externalPurchaseId) == [failing, refusedKey],
            "soonest first; the one never sent is not waiting to be sent again")
        let first = try #require(health.waiting.first)
        #expect(first.attempts == 1 && first.failures == 1 && first.lastStatus == nil && first.lastAnswer == "no answer: Could not connect")
        #expect(health.waiting.last?.failures == 0 && health.waiting.last?.lastStatus == 401, "a 401 is the key's fault, not the report's")
        #expect(try reporting.health(now: Self.now + 1_000, waitingLimit: 20) == health)

        // Its sender's lease running out moves `held` to retrying, and its next send is not a failure.
        let expired = try reporting.status(now: Self.now + 10_000, noPurchaseAfterMs: Self.window, gatherMs: 0)
        #expect(expired.rows.first?.sending == 0 && expired.rows.first?.retrying == 3 && expired.health.retrying == 3)
        let resent = try reporting.claimReports(now: Self.now + 10_000, leaseMs: 10_000, limit: 10)
        #expect(resent.map(\.externalPurchaseId) == [held] && resent.first?.attempts == 2 && resent.first?.failures == 0)
        _ = held
        // The one never sent is taken again as a first send once the pause ends.
        let afterPause = try reporting.claimReports(now: Self.now + 300_000, leaseMs: 10_000, limit: 10)
        #expect(afterPause.first { $0.externalPurchaseId == notSent }?.attempts == 1)
    }

    @Test(arguments: Kind.allCases)
    func outcomesMoveTheTokenOn(_ kind: Kind) throws {
        let stores = try stores(kind)
        let accepted = try record(stores.writer, ageHours: 100)
        let retried = try record(stores.writer, ageHours: 100)
        let failed = try record(stores.writer, ageHours: 100)
        let reporting = try stores.open()
        #expect(try plan(reporting) == 3)
        let claimed = Dictionary(
            uniqueKeysWithValues: try reporting.claimReports(now: Self.now, leaseMs: 10_000, limit: 10).map { ($0.externalPurchaseId, $0) })
        try reporting.finish(try #require(claimed[accepted]), .accepted(answer: "HTTP 200"), now: Self.now)
        try reporting.finish(
            try #require(claimed[retried]), .retry(nextAttemptAt: Self.now + 5_000, answer: "HTTP 500", status: 500), now: Self.now)
        try reporting.finish(try #require(claimed[failed]), .failed(answer: "HTTP 400 errors", retryAt: nil), now: Self.now)

        let status = try #require(try reporting.status(now: Self.now, noPurchaseAfterMs: Self.window, gatherMs: 0).rows.first)
        #expect(
            status.reported == 1 && status.retrying == 1 && status.sending == 0 && status.failed == 1 && status.waiting == 0
                && status.due == 0)
        #expect(try reporting.failedReports(limit: 5).map(\.externalPurchaseId) == [failed])
        // The retry waits for its time; nothing new is planned for any of the three.
        #expect(try reporting.claimReports(now: Self.now + 4_999, leaseMs: 10_000, limit: 10).isEmpty)
        #expect(try plan(reporting, at: Self.now + 5_000) == 0)
        #expect(try reporting.claimReports(now: Self.now + 5_000, leaseMs: 10_000, limit: 10).map(\.externalPurchaseId) == [retried])
    }

    /// The reporter's batch: many outcomes in one transaction, each as the single finish records it, and
    /// one that no longer applies (its lease taken by another sender, who finished it) changes nothing.
    @Test(arguments: Kind.allCases)
    func aBatchOfOutcomesIsRecordedInOneTransaction(_ kind: Kind) throws {
        let stores = try stores(kind)
        let ids = try (0..<120).map { _ in try record(stores.writer, ageHours: 100) }
        let reporting = try stores.open()
        #expect(try plan(reporting) == 120)
        let claimed = try reporting.claimReports(now: Self.now, leaseMs: 10_000, limit: 200)
        #expect(claimed.count == 120)
        var finishes = claimed.prefix(100).map { ReportFinish($0, .accepted(answer: "HTTP 200"), now: Self.now + 1_000) }
        finishes += claimed[100..<110].map {
            ReportFinish($0, .retry(nextAttemptAt: Self.now + 5_000, answer: "HTTP 500", status: 500), now: Self.now + 1_000)
        }
        finishes += claimed[110...].map { ReportFinish($0, .notSent(nextAttemptAt: Self.now + 2_000), now: Self.now + 1_000) }
        try reporting.finish(finishes)
        try reporting.finish([])

        let status = try #require(try reporting.status(now: Self.now + 1_000, noPurchaseAfterMs: Self.window, gatherMs: 0).rows.first)
        #expect(status.reported == 100 && status.retrying == 10 && status.due == 10 && status.sending == 0, "\(status)")
        let health = try reporting.health(now: Self.now + 1_000, waitingLimit: 0)
        #expect(health.accepted == 100 && health.retrying == 10 && health.toSend == 10 && health.sending == 0)
        // The not-sent ones are due at their time with their attempt not counted; the retried after theirs.
        let again = try reporting.claimReports(now: Self.now + 2_000, leaseMs: 10_000, limit: 200)
        #expect(Set(again.map(\.externalPurchaseId)) == Set(ids.filter { id in claimed[110...].contains { $0.externalPurchaseId == id } }))
        #expect(again.allSatisfy { $0.attempts == 1 && $0.failures == 0 })
        // A stale outcome for an accepted report, in a batch with a good one, changes nothing of it.
        try reporting.finish([
            ReportFinish(claimed[0], .retry(nextAttemptAt: Self.now + 9_000, answer: "late", status: 500), now: Self.now + 2_000),
            ReportFinish(again[0], .accepted(answer: "HTTP 200"), now: Self.now + 2_000),
        ])
        let after = try reporting.health(now: Self.now + 2_000, waitingLimit: 0)
        #expect(after.accepted == 101, "\(after)")
    }

    @Test(arguments: Kind.allCases)
    func lineItemsGoAsLineItemReportsAndRestatementsAfterAcceptance(_ kind: Kind) throws {
        let stores = try stores(kind)
        let id = try record(stores.writer, ageHours: 1)
        let reporting = try stores.open()
        #expect(try store(reporting, id, [("order-1", line("order-1"))]).added == ["order-1"])
        #expect(try store(reporting, id, [("order-1", line("order-1"))]).unchanged == ["order-1"])
        // Gathering: nothing until the lines have waited, and `report status` calls the token waiting until
        // then, due after, as the plan takes it.
        let gathering = try #require(try reporting.status(now: Self.now, noPurchaseAfterMs: Self.window, gatherMs: 30_000).rows.first)
        #expect(gathering.waiting == 1 && gathering.due == 0, "\(gathering)")
        let gathered = try #require(
            try reporting.status(now: Self.now + 30_000, noPurchaseAfterMs: Self.window, gatherMs: 30_000).rows.first)
        #expect(gathered.waiting == 0 && gathered.due == 1, "\(gathered)")
        #expect(try plan(reporting, gatherMs: 30_000) == 0)
        #expect(try plan(reporting, at: Self.now + 30_000, gatherMs: 30_000) == 1)
        let first = try #require(try reporting.claimReports(now: Self.now + 30_000, leaseMs: 10_000, limit: 10).first)
        #expect(first.status == "LINE_ITEM")
        #expect(first.body.contains(#""lineItemId":"order-1""#) && !first.body.contains("restatement"))
        try reporting.finish(first, .accepted(answer: "HTTP 200"), now: Self.now + 30_000)

        // Changed after Apple took it: a restatement, in a new report.
        #expect(try store(reporting, id, [("order-1", line("order-1", net: 1000))], at: Self.now + 40_000).restated == ["order-1"])
        #expect(try plan(reporting, at: Self.now + 40_000) == 1)
        let second = try #require(try reporting.claimReports(now: Self.now + 40_000, leaseMs: 10_000, limit: 10).first)
        #expect(second.requestIdentifier != first.requestIdentifier)
        #expect(second.body.contains(#""netAmountTaxExclusive":1000"#) && second.body.contains(#""restatement":true"#))
        try reporting.finish(second, .accepted(answer: "HTTP 200"), now: Self.now + 40_000)

        // A token with a LINE_ITEM report never gets NO_LINE_ITEM, however old.
        #expect(try plan(reporting, at: Self.now + 1_000 * Self.hour) == 0)
        #expect(try reporting.status(now: Self.now, noPurchaseAfterMs: Self.window, gatherMs: 0).rows.first?.reported == 1)
    }

    @Test(arguments: Kind.allCases)
    func aRefusedReportIsSentAgainAtItsRetryTimeWithTheSameRequestIdentifier(_ kind: Kind) throws {
        let stores = try stores(kind)
        let id = try record(stores.writer, ageHours: 100)
        let reporting = try stores.open()
        #expect(try plan(reporting) == 1)
        let report = try #require(try reporting.claimReports(now: Self.now, leaseMs: 10_000, limit: 10).first)
        try reporting.finish(report, .failed(answer: "HTTP 400", retryAt: Self.now + Self.hour), now: Self.now)
        let standing = try reporting.failedReports(limit: 5)
        #expect(standing.map(\.requestIdentifier) == [report.requestIdentifier])
        #expect(standing.first?.retryAt == Self.now + Self.hour && standing.first?.refusals == 1)
        #expect(standing.first?.month == UTCMonth(containing: Self.now - 100 * Self.hour))
        #expect(try reporting.refusedCount().count == 1)
        // Not before its time; then the same report, its refusal counted, and no new one.
        #expect(try plan(reporting, at: Self.now + Self.hour - 1) == 0)
        #expect(try plan(reporting, at: Self.now + Self.hour) == 1)
        let again = try #require(try reporting.claimReports(now: Self.now + Self.hour, leaseMs: 10_000, limit: 10).first)
        #expect(
            again.requestIdentifier == report.requestIdentifier && again.refusals == 1 && again.failures == 0
                && again.externalPurchaseId == id)
        #expect(try reporting.failedReports(limit: 5).isEmpty)
        try reporting.finish(again, .accepted(answer: "HTTP 200"), now: Self.now + Self.hour)
        #expect(try reporting.status(now: Self.now + Self.hour, noPurchaseAfterMs: Self.window, gatherMs: 0).rows.first?.reported == 1)
        #expect(try reporting.refusedCount().count == 0)
    }

    @Test(arguments: Kind.allCases)
    func onlyTheRefusalThatStillStandsForItsTokenIsSentAgain(_ kind: Kind) throws {
        let stores = try stores(kind)
        let id = try record(stores.writer, ageHours: 1)
        let reporting = try stores.open()
        _ = try store(reporting, id, [("order-1", line("order-1"))])
        #expect(try plan(reporting) == 1)
        let first = try #require(try reporting.claimReports(now: Self.now, leaseMs: 10_000, limit: 10).first)
        try reporting.finish(first, .failed(answer: "HTTP 400", retryAt: nil), now: Self.now)
        // A restatement replaces it: a new report, which is refused too.
        _ = try store(reporting, id, [("order-1", line("order-1", net: 2000))], at: Self.now + 1)
        #expect(try plan(reporting, at: Self.now + 1) == 1)
        let second = try #require(try reporting.claimReports(now: Self.now + 1, leaseMs: 10_000, limit: 10).first)
        try reporting.finish(second, .failed(answer: "HTTP 400", retryAt: nil), now: Self.now + 1)
        #expect(try reporting.failedReports(limit: 5).map(\.requestIdentifier) == [second.requestIdentifier])
        let old = try reporting.retryRefused(.report(requestIdentifier: first.requestIdentifier), now: Self.now + 2)
        #expect(old.requeued.isEmpty && old.notRefused == [first.requestIdentifier])
        let all = try reporting.retryRefused(.all, now: Self.now + 2)
        #expect(all.requeued == [second.requestIdentifier])
        // Taken once: a second retry, or a planner, finds nothing to send again.
        #expect(try reporting.retryRefused(.all, now: Self.now + 2).requeued.isEmpty)
        #expect(try plan(reporting, at: Self.now + 2) == 0)
        #expect(
            try reporting.claimReports(now: Self.now + 2, leaseMs: 10_000, limit: 10).map(\.requestIdentifier) == [second.requestIdentifier]
        )
    }

    @Test(arguments: Kind.allCases)
    func aRefusedReportWaitsForItsLinesToChange(_ kind: Kind) throws {
        let stores = try stores(kind)
        let id = try record(stores.writer, ageHours: 100)
        let reporting = try stores.open()
        _ = try store(reporting, id, [("order-1", line("order-1"))])
        #expect(try plan(reporting) == 1)
        let report = try #require(try reporting.claimReports(now: Self.now, leaseMs: 10_000, limit: 10).first)
        try reporting.finish(report, .failed(answer: "HTTP 400", retryAt: nil), now: Self.now)
        // Old enough for NO_LINE_ITEM, but it has lines; and its lines did not change: nothing.
        #expect(try plan(reporting, at: Self.now + Self.hour) == 0)
        _ = try store(reporting, id, [("order-1", line("order-1", net: 2000))], at: Self.now + Self.hour)
        #expect(try plan(reporting, at: Self.now + Self.hour) == 1)
        let resent = try #require(try reporting.claimReports(now: Self.now + Self.hour, leaseMs: 10_000, limit: 10).first)
        // Apple never took the first version: the correction goes as the line itself, not a restatement.
        #expect(!resent.body.contains("restatement") && resent.body.contains(#""netAmountTaxExclusive":2000"#))
    }

    @Test(arguments: Kind.allCases)
    func linesForAnUnknownTokenOrAnotherTokensIdAreRefused(_ kind: Kind) throws {
        let stores = try stores(kind)
        let first = try record(stores.writer, ageHours: 1)
        let second = try record(stores.writer, ageHours: 1)
        let reporting = try stores.open()
        #expect(throws: ReportingStoreError.unknownToken("nope")) { try store(reporting, "nope", [("x", line("x"))]) }
        _ = try store(reporting, first, [("order-1", line("order-1"))])
        #expect(throws: ReportingStoreError.lineItemOfAnotherToken("order-1")) {
            try store(reporting, second, [("order-1", line("order-1", net: 5))])
        }
    }

    /// The sync writes its slices with its own settings (no fsync, no checkpoint below 64 MiB of WAL,
    /// statement journals in memory) and leaves the connection as every other write on it needs it: a line
    /// item's or an outbox's commit on disk when it returns, temporary files as files (an export's sort).
    @Test func aSyncBringsEveryVisitInAndLeavesTheConnectionsSettingsAsTheyWere() throws {
        let stores = try stores(.sqlite)
        // Enough for several slices (a slice starts at 64 visits).
        let ids = (0..<3_000).map { _ in UUID().uuidString.lowercased() }
        try stores.writer.commit(
            ids.map { id in
                .token(
                    TokenRecord(
                        token: ExternalPurchaseToken(
                            appAppleId: 1234567890, bundleId: "com.example", tokenCreationDate: Self.now, externalPurchaseId: id),
                        link: "nl", country: "nl", destination: "https://a.example/", seenAt: Self.now, stale: false))
            })
        let reporting = try stores.open()
        let sqlite = try #require(reporting.database as? SQLiteConnection)
        try reporting.syncTokens()
        #expect(try sqlite.integer("SELECT count(*) FROM report_tokens") == Int64(ids.count))
        #expect(try reporting.recordedTokens(ids) == Set(ids))
        #expect(try sqlite.integer("PRAGMA synchronous") == 2, "FULL")
        #expect(try sqlite.integer("PRAGMA wal_autocheckpoint") == 1000)
        #expect(try sqlite.integer("PRAGMA temp_store") == 0, "DEFAULT: files")
    }

    /// Two instances' reporters at once: every token planned once, every report taken by one of them.
    @Test func twoPostgresConnectionsShareTheOutboxWithoutOverlap() throws {
        let stores = try stores(.postgres)
        var ids: Set<String> = []
        for _ in 0..<200 { ids.insert(try record(stores.writer, ageHours: 100)) }
        // Each connection is used by one thread only.
        nonisolated(unsafe) let connections = [try stores.open(), try stores.open()]
        let planned = Counts()
        let claimed = Counts()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let reporting = connections[index]
            // Small rounds, so the two interleave.
            for _ in 0..<20 {
                if let made = try? reporting.planReports(now: Self.now, noPurchaseAfterMs: Self.window, gatherMs: 0) { planned.add(made) }
                if let taken = try? reporting.claimReports(now: Self.now, leaseMs: 60_000, limit: 7) {
                    claimed.add(taken.map(\.externalPurchaseId))
                }
            }
            while let taken = try? reporting.claimReports(now: Self.now, leaseMs: 60_000, limit: 7), !taken.isEmpty {
                claimed.add(taken.map(\.externalPurchaseId))
            }
        }
        #expect(planned.total == 200)
        #expect(claimed.ids.count == 200, "each report taken once")
        #expect(Set(claimed.ids) == ids)
    }

    final class Counts: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var total = 0
        private(set) var ids: [String] = []
        func add(_ count: Int) { lock.withLock { total += count } }
        func add(_ more: [String]) { lock.withLock { ids += more } }
    }
}
