import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

/// The experiments' purchases on both stores: which variant a purchase counts for (its token's first
/// shopper's visit), which lines count (not withdrawn ones, not a token only bots saw), and on SQLite, the
/// same answer after an upgrade from schema 6, whose `report_tokens` did not keep the first shopper.
@Suite struct DashboardExperimentsTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    static let now: Int64 = 1_800_000_000_000
    let range = DashboardStore.Range(from: now - 3_600_000, to: now + 3_600_000)

    struct Stores {
        let writer: any TokenStore
        let path: String?
        let open: () throws -> DashboardStore
    }

    func stores(_ kind: Kind) throws -> Stores {
        switch kind {
        case .sqlite:
            let path = StoreFixtures.temporaryPath()
            return Stores(writer: try SQLiteTokenStore(path: path), path: path) { try DashboardStore(sqlitePath: path) }
        case .postgres:
            let url = try PostgresServer.createDatabase()
            _ = try PostgresTokenStore.migrate(url: url)
            return Stores(writer: try PostgresTokenStore(url: url), path: nil) { try DashboardStore(postgresURL: url) }
        }
    }

    func visit(_ id: String, _ minute: Int64, _ kind: VisitKind, _ variant: String) -> VisitRecord {
        .token(TokenBuilder.record(id: id, seenAt: Self.now + minute * 60_000, kind: kind, experiment: "price", variant: variant))
    }

    func line(_ id: String, net: Int64, withdrawn: Bool = false) -> LineItemWrite {
        LineItemWrite(
            lineItemId: id,
            json:
                #"{"lineItemId":"\#(id)","reportingCurrency":"EUR","netAmountTaxExclusive":\#(net)\#(withdrawn ? #","erroneouslySubmitted":true"# : "")}"#
        )
    }

    /// Four tokens, committed in three batches, with a reporting sync between them on SQLite.
    func fill(_ stores: Stores) throws -> DashboardStore {
        let dashboard = try stores.open()
        // A: a prefetch first (variant b), then its first shopper's visit (a), then another shopper's (b).
        // Ten minutes apart, so that a range can start between them (buckets are 5 minutes).
        try stores.writer.commit([visit("a", 0, .prefetch, "b"), visit("b", 10, .shopper, "b")])
        try dashboard.reporting.syncTokens()
        try stores.writer.commit([visit("a", 20, .shopper, "a"), visit("c", 30, .bot, "a"), visit("d", 40, .shopper, "b")])
        try dashboard.reporting.syncTokens()
        try stores.writer.commit([visit("a", 50, .shopper, "b")])
        for (id, lines) in [
            ("a", [line("a1", net: 2470)]),
            ("b", [line("b1", net: 1000), line("b2", net: 500, withdrawn: true)]),
            ("c", [line("c1", net: 9999)]),
            ("d", [line("d1", net: 7777, withdrawn: true)]),
        ] {
            _ = try dashboard.reporting.storeLineItems(externalPurchaseId: id, lineItemIds: lines.map(\.lineItemId), now: Self.now) {
                _, _ in lines
            }
        }
        return dashboard
    }

    func expectOutcomes(_ dashboard: DashboardStore, _ kind: Kind, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let outcomes = try dashboard.experimentOutcomes(range, link: nil)
        // Shoppers' visits, from the buckets: a once (A's first), b three times (B, D, A's second).
        #expect(outcomes.map(\.variant) == ["a", "b"], sourceLocation: sourceLocation)
        #expect(outcomes.map(\.visits) == [1, 3], sourceLocation: sourceLocation)
        // A counts for a, its first shopper's variant; B for b without its withdrawn line; C (bots only)
        // and D (withdrawn only) for nothing.
        #expect(outcomes.map(\.purchasers) == [1, 1], sourceLocation: sourceLocation)
        #expect(outcomes.map(\.revenue) == [["EUR": 2470], ["EUR": 1000]], sourceLocation: sourceLocation)
        // From minute 15: B's first shopper (minute 10) is out, A's (minute 20) in on SQLite; on PostgreSQL
        // a range holds the tokens first seen in it, and A was first seen by its prefetch (minute 0).
        let later = DashboardStore.Range(from: Self.now + 15 * 60_000, to: Self.now + 60 * 60_000)
        let partial = try dashboard.experimentOutcomes(later, link: nil)
        #expect(partial.map(\.visits) == [1, 2], sourceLocation: sourceLocation)
        #expect(partial.map(\.purchasers) == (kind == .sqlite ? [1, 0] : [0, 0]), sourceLocation: sourceLocation)
        #expect(partial.map(\.revenue) == (kind == .sqlite ? [["EUR": 2470], [:]] : [[:], [:]]), sourceLocation: sourceLocation)
        let before = DashboardStore.Range(from: Self.now - 7_200_000, to: Self.now - 3_600_000)
        #expect(try dashboard.experimentOutcomes(before, link: nil).isEmpty, sourceLocation: sourceLocation)
    }

    @Test(arguments: Kind.allCases)
    func purchasesCountForTheFirstShoppersVariant(_ kind: Kind) throws {
        let stores = try stores(kind)
        try expectOutcomes(try fill(stores), kind)
    }

    @Test func anUpgradeFromSchemaSixFindsTheFirstShoppersOfTokensAlreadyInReporting() throws {
        let stores = try stores(.sqlite)
        let path = try #require(stores.path)
        _ = try fill(stores)
        stores.writer.close()
        // Schema 6 as it shipped: report_tokens without the first shopper's columns.
        do {
            let connection = try SQLiteConnection(path: path, readOnly: false)
            try connection.execute(
                """
                \(StoreFixtures.undoSchemaSeven)
                PRAGMA user_version = 6;
                """)
        }
        let upgraded = try SQLiteTokenStore(path: path)
        #expect(try upgraded.connection.integer("PRAGMA user_version") == SQLiteTokenStore.schemaVersion)
        // The upgrade itself reads no visit; the reporter's rounds do, a chunk at a time.
        #expect(try upgraded.connection.integer("SELECT count(*) FROM report_tokens WHERE shopper_seen IS NOT NULL") == 0)
        let dashboard = try DashboardStore(sqlitePath: path)
        #expect(try dashboard.experimentOutcomes(range, link: nil).map(\.purchasers) == [0, 0])
        #expect(try dashboard.reporting.backfillFirstShoppers(budget: 10) == false)
        #expect(try upgraded.connection.integer("SELECT count(*) FROM report_tokens WHERE shopper_seen IS NOT NULL") == 3)
        try expectOutcomes(dashboard, .sqlite)
        // Visits recorded after the upgrade are synced as they come; the backfill has nothing left.
        try upgraded.commit([visit("e", 55, .shopper, "a")])
        try dashboard.reporting.syncTokens()
        #expect(try dashboard.reporting.backfillFirstShoppers(budget: 10) == false)
        #expect(try upgraded.connection.integer("SELECT count(*) FROM report_tokens WHERE shopper_seen IS NOT NULL") == 4)
    }

    /// The tally's rows that count (a share taken back leaves a row of zeros).
    func tally(_ dashboard: DashboardStore) throws -> [String] {
        var rows: [String] = []
        try dashboard.database.query(
            """
            SELECT bucket_start, link, experiment, variant, currency, tokens, net FROM purchase_buckets
            WHERE tokens <> 0 OR net <> 0 ORDER BY 1, 2, 3, 4, 5
            """, []
        ) { row in
            rows.append((0..<7).map { (try? row.text($0)) ?? "?" }.joined(separator: " "))
        }
        return rows
    }

    /// The tally as a recount of every line item from scratch would make it, inside a transaction rolled
    /// back: what the changes kept up one by one must come to.
    func recount(_ dashboard: DashboardStore, _ kind: Kind) throws -> [String] {
        struct Undo: Error {}
        var rows: [String] = []
        do {
            try dashboard.database.transaction {
                try dashboard.database.query("DELETE FROM purchase_buckets")
                let everyToken = "SELECT external_purchase_id FROM line_items"
                try dashboard.database.query(PurchaseTally.apply(1, tokensIn: everyToken, postgres: kind == .postgres))
                rows = try tally(dashboard)
                throw Undo()
            }
        } catch is Undo {}
        return rows
    }

    func store(_ dashboard: DashboardStore, _ id: String, _ lines: [LineItemWrite]) throws {
        _ = try dashboard.reporting.storeLineItems(externalPurchaseId: id, lineItemIds: lines.map(\.lineItemId), now: Self.now) { _, _ in
            lines
        }
    }

    /// A line restated, then withdrawn; a token whose line items came before its first shopper (seen first
    /// by a prefetch); one Apple told of before any visit (a custom link's): each moves its purchases where
    /// a recount of every line item puts them, and nothing is counted twice.
    @Test(arguments: Kind.allCases)
    func theTallyFollowsRevisionsWithdrawalsAndLateFirstShoppers(_ kind: Kind) throws {
        let stores = try stores(kind)
        let dashboard = try fill(stores)
        #expect(try tally(dashboard) == (try recount(dashboard, kind)))
        func outcomes() throws -> [(Int64, [String: Int64])] {
            try dashboard.experimentOutcomes(range, link: nil).map { ($0.purchasers, $0.revenue) }
        }

        // B's line restated from 10.00 to 15.00, then withdrawn: b keeps no purchaser and no revenue.
        try store(dashboard, "b", [line("b1", net: 1500)])
        #expect(try outcomes().map(\.1) == [["EUR": 2470], ["EUR": 1500]])
        try store(dashboard, "b", [line("b1", net: 1500, withdrawn: true)])
        #expect(try outcomes().map(\.0) == [1, 0])
        #expect(try outcomes().map(\.1) == [["EUR": 2470], [:]])

        // P: a prefetch (variant a), its line items, then its first shopper, of variant b.
        try stores.writer.commit([visit("p", 25, .prefetch, "a")])
        try store(dashboard, "p", [line("p1", net: 300)])
        #expect(try outcomes().map(\.0) == [1, 0])
        try stores.writer.commit([visit("p", 35, .shopper, "b")])
        try dashboard.reporting.syncTokens()
        #expect(try outcomes().map(\.0) == [1, 1])
        #expect(try outcomes().map(\.1) == [["EUR": 2470], ["EUR": 300]])

        // N: known from Apple's notification before any visit, with a line; then its shopper (variant a).
        try dashboard.database.query(
            """
            INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, learnt_from)
            VALUES ('n', ?1, ?2, 'Production', 500, 'created')
            """, [.text(AppleSampleToken.bundleId), .integer(AppleSampleToken.appAppleId)])
        try store(dashboard, "n", [line("n1", net: 40), line("n2", net: 2)])
        #expect(try outcomes().map(\.0) == [1, 1])
        try stores.writer.commit([visit("n", 45, .shopper, "a")])
        try dashboard.reporting.syncTokens()
        #expect(try outcomes().map(\.0) == [2, 1])
        #expect(try outcomes().map(\.1) == [["EUR": 2512], ["EUR": 300]])

        #expect(try tally(dashboard) == (try recount(dashboard, kind)))
        // A, P and N, each a purchaser row and a EUR row; B's withdrawn line left zeros.
        let rows = try tally(dashboard)
        #expect(rows.count == 6, "\(rows)")
    }

    /// An upgrade to schema 8 (migration 8) counts the line items already stored.
    @Test(arguments: Kind.allCases)
    func theUpgradeCountsTheLineItemsAlreadyStored(_ kind: Kind) throws {
        switch kind {
        case .sqlite:
            let stores = try stores(kind)
            let path = try #require(stores.path)
            let dashboard = try fill(stores)
            let counted = try tally(dashboard)
            stores.writer.close()
            let connection = try SQLiteConnection(path: path, readOnly: false)
            try connection.execute("\(StoreFixtures.undoSchemaEight) PRAGMA user_version = 7;")
            _ = try SQLiteTokenStore(path: path)
            #expect(try connection.integer("PRAGMA user_version") == SQLiteTokenStore.schemaVersion)
            let recounted = try tally(dashboard)
            #expect(counted.count == 4 && recounted == counted)
            try expectOutcomes(dashboard, kind)
        case .postgres:
            let url = try PostgresServer.createDatabase()
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            #expect(try PostgresMigrations.migrate(connection, upTo: 7).last == 7)
            try connection.execute(
                """
                INSERT INTO tokens (external_purchase_id, app_apple_id, bundle_id, token_creation_date, environment, link,
                    country, destination, first_seen, last_seen, hits, stale, experiment, variant)
                VALUES ('old', 1, 'com.example', 5, 'production', 'nl', 'nl', 'https://a/', 610000, 610000, 1, false, 'price', 'b');
                INSERT INTO line_items (bundle_id, line_item_id, external_purchase_id, body, revision, received_at)
                VALUES ('com.example', 'l1', 'old', '{"reportingCurrency":"EUR","netAmountTaxExclusive":990}', 1, 700000);
                """)
            #expect(try PostgresMigrations.migrate(connection) == Array(8...PostgresMigrations.latestVersion))
            let dashboard = try DashboardStore(postgresURL: url)
            #expect(try tally(dashboard) == ["600000 nl price b  1 0", "600000 nl price b EUR 1 990"])
        }
    }
}
