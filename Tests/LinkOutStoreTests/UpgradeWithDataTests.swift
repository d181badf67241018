import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

/// A store as an earlier linkout left it, with its data (`RecordedWorkload`: made by that version's steps
/// only, then filled with the SQL that version wrote), is upgraded by this build as an operator's would be
/// (SQLite: `serve` opening it; PostgreSQL: `linkout store migrate`), then read back through the stores'
/// own reads: every row of every table it had is still there with the same values, and the export, the
/// reporting counts, the outbox, the notifications, the providers' ledger, the statement and month close
/// say what the old store held. Then the reporter's round plans what is due and the writer commits again.
///
/// `MigrationTests` check that an upgraded store's schema is a new store's; this checks that the data
/// comes through.
@Suite(.serialized) struct UpgradeWithDataTests {
    typealias W = RecordedWorkload

    /// Every table's columns, in order (not views, not the migrations' own bookkeeping).
    static func columns(_ database: any ReportingDatabase) throws -> [String: [String]] {
        var columns: [String: [String]] = [:]
        let sql =
            database.isPostgres
            ? """
            SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name <> 'linkout_schema' ORDER BY table_name, ordinal_position
            """
            : """
            SELECT m.name, p.name FROM sqlite_master AS m, pragma_table_info(m.name) AS p
            WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid
            """
        try database.query(sql, []) { columns[try $0.text(0), default: []].append(try $0.text(1)) }
        return columns
    }

    /// Every row of each of `columns`' tables, each as the text of those columns (NULL apart from ''),
    /// sorted: what an upgrade must keep, whatever it adds beside.
    static func rows(_ database: any ReportingDatabase, columns: [String: [String]]) throws -> [String: [String]] {
        var rows: [String: [String]] = [:]
        for (table, names) in columns {
            let quoted = names.map { database.isPostgres ? "quote_nullable(\"\($0)\"::text)" : "quote(\"\($0)\")" }
            var found: [String] = []
            try database.query("SELECT \(quoted.joined(separator: " || '|' || ")) FROM \"\(table)\"", []) { found.append(try $0.text(0)) }
            rows[table] = found.sorted()
        }
        return rows
    }

    /// The rows before and after, table by table, with what went missing and what appeared.
    static func expectKept(_ before: [String: [String]], _ after: [String: [String]], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            before.values.map(\.count).reduce(0, +) >= 15, "the workload wrote \(before.mapValues(\.count))", sourceLocation: sourceLocation
        )
        for (table, rows) in before.sorted(by: { $0.key < $1.key }) {
            let kept = after[table] ?? []
            let lost = rows.filter { !kept.contains($0) }, changed = kept.filter { !rows.contains($0) }
            #expect(kept == rows, "table \(table): lost or changed by the upgrade \(lost), now \(changed)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: RecordedWorkload.versions)
    func aSQLiteStoreAnEarlierVersionLeftKeepsItsDataThroughTheUpgrade(_ version: Int) throws {
        let path = try MigrationTests.path()
        let columns: [String: [String]]
        let before: [String: [String]]
        do {
            let connection = try SQLiteConnection(path: path, readOnly: false)
            try SQLiteTokenStore.migrate(connection, upTo: version)
            try connection.execute(W.sqlite(version: version))
            columns = try Self.columns(connection)
            before = try Self.rows(connection, columns: columns)
        }
        // `serve` upgrades the file in place as it opens it.
        try SQLiteTokenStore(path: path).close()
        do {
            let connection = try SQLiteConnection(path: path, readOnly: true)
            #expect(try connection.integer("PRAGMA user_version") == SQLiteTokenStore.schemaVersion)
            Self.expectKept(before, try Self.rows(connection, columns: columns))
        }
        try expectReadBack(
            version, postgres: false, export: try SQLiteTokenStore(readingFrom: path), reporting: try SQLReportingStore(sqlitePath: path),
            dashboard: try DashboardStore(sqlitePath: path), writer: { try SQLiteTokenStore(path: path) })
    }

    @Test(arguments: RecordedWorkload.versions)
    func aPostgresDatabaseAnEarlierVersionLeftKeepsItsDataThroughTheUpgrade(_ version: Int) throws {
        let url = try PostgresServer.createDatabase()
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        #expect(try PostgresMigrations.migrate(connection, upTo: version) == Array(1...version))
        try connection.execute(W.postgres(version: version))
        let columns = try Self.columns(connection)
        let before = try Self.rows(connection, columns: columns)
        // `linkout store migrate`.
        let upgraded = try PostgresTokenStore.migrate(url: url)
        #expect(
            upgraded.applied == Array((version + 1)...PostgresMigrations.latestVersion)
                && upgraded.version == PostgresTokenStore.schemaVersion)
        Self.expectKept(before, try Self.rows(connection, columns: columns))
        try expectReadBack(
            version, postgres: true, export: try PostgresTokenStore(url: url), reporting: try SQLReportingStore(postgresURL: url),
            dashboard: try DashboardStore(postgresURL: url), writer: { try PostgresTokenStore(url: url) })
    }

    /// What this build reads of the upgraded store, then the reporter's round and a commit on it.
    func expectReadBack(
        _ version: Int, postgres: Bool, export: any TokenStore, reporting: SQLReportingStore, dashboard: DashboardStore,
        writer: () throws -> any TokenStore, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let hasReporting = version >= 5, hasRegistrations = version >= 10
        // `tokens export`.
        #expect(try StoreFixtures.tokens(in: export) == W.exported(version: version), sourceLocation: sourceLocation)
        #expect(try export.untokenedVisitCount() == 4, sourceLocation: sourceLocation)

        // Reporting, after its sync: every token, and those only Apple told of.
        try reporting.syncTokens()
        for token in W.reportingTokens(version: version) {
            #expect(try reporting.token(token.externalPurchaseId) == token, sourceLocation: sourceLocation)
        }
        #expect(
            try reporting.recentNotifications(limit: 10).map(\.notificationUUID)
                == (hasReporting ? ["n-unreported-10", "n-unreported-3", "n-created-11", "n-test"] : []), sourceLocation: sourceLocation)
        if hasReporting {
            #expect(
                try reporting.recentNotifications(limit: 10).last
                    == StoredNotification(
                        notificationUUID: "n-test", notificationType: "TEST", subtype: nil, signedDate: W.start, externalPurchaseId: nil,
                        environment: "production", outcome: "stored", receivedAt: W.start + 1), sourceLocation: sourceLocation)
        }

        // The outbox: accepted reports with their bodies, the refused one (counted by step 12), the one
        // waiting to be sent again.
        #expect(try reporting.countAcceptedReports(tokensCreated: nil) == (hasReporting ? 2 : 0), sourceLocation: sourceLocation)
        let accepted = try reporting.acceptedReports(tokensCreated: nil, after: nil, limit: 10).map {
            "\($0.report.requestIdentifier) \($0.report.externalPurchaseId) \($0.report.status) \($0.report.body) \($0.report.attempts) \($0.tokenCreationDate) \($0.acceptedAt)"
        }
        #expect(
            accepted
                == (hasReporting
                    ? [
                        "req-bought \(W.bought) LINE_ITEM \(W.body("req-bought", W.bought, "LINE_ITEM")) 1 \(W.created(1)) \(W.boughtReportAt + 500)",
                        "req-quiet \(W.quiet) NO_LINE_ITEM \(W.body("req-quiet", W.quiet, "NO_LINE_ITEM")) 1 \(W.created(2)) \(W.quietReportAt + 400)",
                    ] : []),
            sourceLocation: sourceLocation)
        let failed = try reporting.failedReports(limit: 10)
        #expect(
            failed
                == (hasReporting
                    ? [
                        FailedReport(
                            requestIdentifier: "req-refused", externalPurchaseId: W.refused, bundleId: W.bundleId, status: "NO_LINE_ITEM",
                            answer: #"HTTP 400 {"errorCode":4000027}"#, finishedAt: W.refusedReportAt + 300, refusals: 1,
                            retryAt: W.refusedReportAt + 300,
                            month: W.month)
                    ] : []),
            sourceLocation: sourceLocation)
        let refusedCount = try reporting.refusedCount()
        #expect(
            refusedCount.count == (hasReporting ? 1 : 0) && refusedCount.months == (hasReporting ? [W.month] : []),
            sourceLocation: sourceLocation)

        // `report status`.
        let summary = try reporting.status(now: W.now, noPurchaseAfterMs: W.window, gatherMs: 0)
        var production = ReportStatusSummary.Row(bundleId: W.bundleId, environment: "production")
        if hasReporting {
            // changed (its lines gathered), prefetched, unrouted, registered, unknown (Apple asked), custom.
            production.due = hasRegistrations ? 6 : 5
            production.retrying = 1
            production.reported = 2
            production.failed = 1
            production.unreportedPastDay7 = hasRegistrations ? 8 : 7
        } else {
            production.due = 7
            production.unreportedPastDay7 = 7
        }
        production.unreportedPastDay10 = production.unreportedPastDay7
        var sandbox = ReportStatusSummary.Row(bundleId: W.bundleId, environment: "sandbox")
        sandbox.due = 1
        sandbox.unreportedPastDay7 = 1
        sandbox.unreportedPastDay10 = 1
        #expect(summary.rows == [production, sandbox], sourceLocation: sourceLocation)
        #expect(summary.reminded == (hasReporting ? 1 : 0), sourceLocation: sourceLocation)
        #expect(
            summary.notifications.map { "\($0.type) \($0.subtype) \($0.outcome) \($0.count)" }
                == (hasReporting
                    ? [
                        "EXTERNAL_PURCHASE_TOKEN CREATED token_recorded 1", "EXTERNAL_PURCHASE_TOKEN UNREPORTED report_due 1",
                        "EXTERNAL_PURCHASE_TOKEN UNREPORTED unrecognized 1", "TEST  stored 1",
                    ] : []),
            sourceLocation: sourceLocation)
        let health = summary.health
        #expect(health.accepted == (hasReporting ? 2 : 0) && health.failed == (hasReporting ? 1 : 0), sourceLocation: sourceLocation)
        #expect(health.retrying == (hasReporting ? 1 : 0) && health.toSend == 0 && health.sending == 0, sourceLocation: sourceLocation)
        #expect(
            health.waiting.map {
                "\($0.requestIdentifier) \($0.attempts) \($0.failures) \($0.lastStatus.map { "\($0)" } ?? "-") \($0.nextAttemptAt)"
            }
                == (hasReporting ? ["req-pending 1 \(version >= 9 ? 1 : 0) \(version >= 9 ? "503" : "-") \(W.pendingNextAttempt)"] : []),
            sourceLocation: sourceLocation)

        // The providers' ledger (version 11) and the dashboard's saved count (8).
        if version >= 11 {
            try reporting.withProviderLedger { (ledger: any ProviderLedger) throws in
                #expect(
                    try ledger.binding(.stripe, "cs_1") == ProviderBinding(externalPurchaseId: W.bought, lineItemId: "stripe:pi_1"),
                    sourceLocation: sourceLocation)
                #expect(
                    try ledger.binding(.stripe, "pi_1") == ProviderBinding(externalPurchaseId: W.bought, lineItemId: "stripe:pi_1"),
                    sourceLocation: sourceLocation)
                #expect(
                    try ledger.openEvents(nil, waitingFor: nil).map { "\($0.provider.rawValue) \($0.eventId) \($0.waitingFor ?? "-")" } == [
                        "paddle evt_2 add_9"
                    ], sourceLocation: sourceLocation)
                #expect(try ledger.addressCountry(.paddle, "add_1") == "NL", sourceLocation: sourceLocation)
                #expect(
                    try ledger.lineItem(externalPurchaseId: W.bought, lineItemId: "stripe:pi_1")?.netAmountTaxExclusive == 2470,
                    sourceLocation: sourceLocation)
            }
            let events = try reporting.providerEventCounts(limit: 10)
            #expect(
                events.count(.stripe, .taken) == 1 && events.count(.paddle, .parked) == 1 && events.count(.stripe, .held) == 1,
                sourceLocation: sourceLocation)
            #expect(
                events.open.first { $0.eventId == "evt_3" }?.problem == "a test payment for a production token",
                sourceLocation: sourceLocation)
        }
        #expect(try dashboard.savedCount(W.savedCountName) == (version >= 8 ? W.savedCount : nil), sourceLocation: sourceLocation)

        // The reporter's round: the refused report again on its own (step 12), the restated line in a
        // LINE_ITEM report, a no-purchase report for each quiet token (UNRECOGNIZED_TOKEN for the one only
        // Apple knew); the waiting report goes out again as it was.
        let made = try reporting.planReports(now: W.now, noPurchaseAfterMs: W.window, gatherMs: 0)
        #expect(made == (!hasReporting ? 8 : hasRegistrations ? 8 : 7), sourceLocation: sourceLocation)
        let claimed = Dictionary(
            uniqueKeysWithValues: try reporting.claimReports(now: W.now, leaseMs: 10_000, limit: 50).map { ($0.externalPurchaseId, $0) })
        var statuses = [W.prefetched: "NO_LINE_ITEM", W.unrouted: "NO_LINE_ITEM", W.sandbox: "NO_LINE_ITEM"]
        if hasRegistrations { statuses[W.registered] = "NO_LINE_ITEM" }
        if hasReporting {
            statuses[W.pending] = "NO_LINE_ITEM"
            statuses[W.refused] = "NO_LINE_ITEM"
            statuses[W.changed] = "LINE_ITEM"
            statuses[W.unknown] = "UNRECOGNIZED_TOKEN"
            statuses[W.custom] = "NO_LINE_ITEM"
        } else {
            for id in [W.bought, W.quiet, W.pending, W.changed, W.refused] { statuses[id] = "NO_LINE_ITEM" }
        }
        #expect(claimed.mapValues(\.status) == statuses, sourceLocation: sourceLocation)
        if hasReporting {
            let again = try #require(claimed[W.pending], sourceLocation: sourceLocation)
            #expect(
                again.requestIdentifier == "req-pending" && again.body == W.body("req-pending", W.pending, "NO_LINE_ITEM"),
                sourceLocation: sourceLocation)
            #expect(again.attempts == 2 && again.failures == (version >= 9 ? 1 : 0), sourceLocation: sourceLocation)
            let refused = try #require(claimed[W.refused], sourceLocation: sourceLocation)
            #expect(
                refused.requestIdentifier == "req-refused" && refused.body == W.body("req-refused", W.refused, "NO_LINE_ITEM"),
                sourceLocation: sourceLocation)
            #expect(refused.refusals == 1 && refused.failures == 0, sourceLocation: sourceLocation)
            let lines = try #require(claimed[W.changed], sourceLocation: sourceLocation)
            #expect(
                lines.body.contains(#""lineItemId":"order-4""#) && lines.body.contains(#""netAmountTaxExclusive":990"#),
                sourceLocation: sourceLocation)
        }

        // The monthly statement and month close. A token's storefront: its first shopper's visit's, else
        // its first visit's or registration's; "" is none, as NULL is.
        func storefront(_ country: String?) -> String { country.flatMap { $0.isEmpty ? nil : $0 } ?? "-" }
        var expectedTokens: [String: Int64] = [:]
        func add(_ environment: String, _ country: String?, visited: Bool, type: String? = nil) {
            expectedTokens["\(environment) \(storefront(country)) \(visited ? "visited" : "not visited") \(type ?? "-")", default: 0] += 1
        }
        for country in ["nl", "be", "nl", "nl", "nl"] { add("production", country, visited: true) }
        // SQLite's storefront column came with step 10 and was not filled for tokens already in reporting:
        // one no shopper reached has none. (Its first shopper's, for the others, was read again by the round.)
        add("production", !postgres && version == 5 ? nil : "nl", visited: false)
        add("production", nil, visited: true)
        if hasRegistrations { add("production", "jp", visited: false, type: "SERVICES") }
        add("sandbox", "nl", visited: true)
        if hasReporting {
            add("production", nil, visited: false)
            add("production", nil, visited: false, type: "ACQUISITION")
        }
        var readTokens: [String: Int64] = [:]
        for count in try reporting.statementTokens(W.month, bundleId: nil) {
            readTokens[
                "\(count.environment.rawValue) \(storefront(count.country)) \(count.visited ? "visited" : "not visited") \(count.tokenType ?? "-")",
                default: 0] += count.count
        }
        #expect(readTokens == expectedTokens, sourceLocation: sourceLocation)
        let lines = try reporting.statementLines(W.month, bundleId: nil).map {
            "\($0.externalPurchaseId) \($0.item.lineItemId) \($0.tapAt) \(storefront($0.country)) \($0.environment.rawValue) \($0.item.netAmountTaxExclusive)"
        }.sorted()
        #expect(
            lines
                == (hasReporting
                    ? [
                        "\(W.bought) stripe:pi_1 \(W.created(1)) nl production 2470",
                        "\(W.changed) order-4 \(W.created(4)) nl production 990",
                    ] : []),
            sourceLocation: sourceLocation)
        #expect(
            try reporting.statementTaps(W.month) == [
                MonthlyStatement.TapCount(link: "free", country: "be", count: 1),
                MonthlyStatement.TapCount(link: "free", country: "nl", count: 1),
            ], sourceLocation: sourceLocation)
        #expect(
            try reporting.monthCounts() == [
                MonthClose.Count(month: W.month, tokens: !hasReporting ? 7 : hasRegistrations ? 10 : 9, reported: hasReporting ? 2 : 0),
                MonthClose.Count(month: W.month, tokens: 1, reported: 0, environment: .sandbox),
            ], sourceLocation: sourceLocation)

        // This build's writer commits on the upgraded store: a repeat visit merges into the old token.
        let store = try writer()
        try store.commit([.token(TokenBuilder.record(id: W.quiet, seenAt: W.now, country: "nl", destination: "https://nl.example/"))])
        store.close()
        // (Their reports' states moved with the round: compared apart from them.)
        func visits(_ tokens: [StoredToken]) -> [StoredToken] {
            tokens.map {
                var token = $0
                token.report = nil
                token.reportedAs = nil
                return token
            }
        }
        var expected = visits(W.exported(version: version))
        expected[1].hits = 2
        expected[1].lastSeen = W.now
        #expect(visits(try StoreFixtures.tokens(in: export)) == expected, sourceLocation: sourceLocation)
    }
}
