import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

/// The dashboard's buckets, written by the writer's commits and read back as the API serves them.
@Suite struct DashboardStoreTests {
    let minute: Int64 = 60_000

    @Test func aBatchBecomesOneRowPerBucketAndKeyAndTheAPIReadsItBack() throws {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteTokenStore(path: path)
        let start: Int64 = 1_800_000_000_000  // on a 5-minute boundary
        var visits: [VisitRecord] = []
        for index in 0..<500 {
            visits.append(
                .token(
                    TokenBuilder.record(
                        id: String(format: "00000000-0000-0000-0000-%012d", index), seenAt: start + Int64(index % 10) * minute,
                        kind: index % 5 == 0 ? .bot : .shopper, experiment: "price", variant: index % 2 == 0 ? "a" : "b")))
        }
        var extras = DashboardExtras()
        extras.addRefusal(link: "nl", reason: "token_not_base64", at: start + 1)
        extras.addRefusal(link: "nl", reason: "token_not_base64", at: start + 2)
        extras.addHealth(target: "https://a.example.com/", up: false, at: start + 3 * minute)
        extras.addHealth(target: "https://a.example.com/", up: true, at: start + 4 * minute)
        try store.commit(visits, batch: BatchIdentity(instance: "t", sequence: 1), extras: extras, now: StoreFixtures.appliedAt)
        // Shoppers: 2 buckets x 2 variants; bots (every fifth) only variant a in the first, b in the second.
        #expect(try store.connection.integer("SELECT count(*) FROM visit_buckets") == 6)
        #expect(try store.connection.integer("SELECT sum(visits) FROM visit_buckets") == 500)
        // The same batch retried counts once.
        try store.commit(visits, batch: BatchIdentity(instance: "t", sequence: 1), extras: extras, now: StoreFixtures.appliedAt)
        #expect(try store.connection.integer("SELECT sum(visits) FROM visit_buckets") == 500)
        store.close()

        let dashboard = try DashboardStore(sqlitePath: path)
        let range = DashboardStore.Range(from: start, to: start + 60 * minute)
        #expect(range.stepMs == 5 * minute)
        let overview = try dashboard.overview(range, link: nil)
        let shoppers = try #require(overview.visits.first { $0.link == "nl" && $0.key == "shopper" })
        #expect(shoppers.counts.count == 12)
        #expect(shoppers.counts[0] == 200 && shoppers.counts[1] == 200)
        #expect(overview.visits.first { $0.key == "bot" }?.counts.reduce(0, +) == 100)
        #expect(overview.refusals.first?.key == "token_not_base64" && overview.refusals.first?.counts[0] == 2)
        #expect(overview.experiments.map(\.visits) == [200, 200])
        #expect(overview.destinations.first?.visits == 400)
        let periods = try #require(overview.health.first).periods
        #expect(periods.map(\.up) == [true, false, true])
        #expect(periods[1].from == start + 3 * minute && periods[1].to == start + 4 * minute)
        #expect(try dashboard.overview(range, link: "de").visits.isEmpty)
        let latest = try dashboard.latest(link: nil, limit: 5)
        #expect(latest.visits.count == 5 && latest.refusals.count == 1)
    }

    /// The headline numbers are the series' sums: an untokened visit (a refused token sent on) is a
    /// refusal, not a visit with a token.
    @Test func totalsAreTheSeriesSums() throws {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteTokenStore(path: path)
        let start: Int64 = 1_800_000_000_000
        let dashboard = try DashboardStore(sqlitePath: path)
        var extras = DashboardExtras()
        extras.addRefusal(link: "nl", reason: "missing_token", at: start - 10 * minute)
        extras.addRefusal(link: "nl", reason: "token_not_base64", at: start + minute)
        try store.commit(
            [
                .token(TokenBuilder.record(seenAt: start)), .token(TokenBuilder.record(seenAt: start + minute)),
                .token(TokenBuilder.record(seenAt: start + minute, kind: .bot)),
                .untokened(
                    UntokenedVisit(
                        link: "nl", country: "nl", destination: "https://a.example.com/", reason: .refused(.tokenNotBase64),
                        seenAt: start + minute)),
            ], batch: BatchIdentity(instance: "t", sequence: 1), extras: extras, now: StoreFixtures.appliedAt)
        let totals = try dashboard.overview(DashboardStore.Range(from: start, to: start + 60 * minute), link: nil).totals
        #expect(totals.visits == 3 && totals.shoppers == 2 && totals.refusals == 1 && totals.linkOuts == 4, "\(totals)")
        #expect(totals.refusalRate == 0.25)
        let wider = try dashboard.overview(DashboardStore.Range(from: start - 60 * minute, to: start + 60 * minute), link: nil).totals
        #expect(wider.refusals == 2 && wider.linkOuts == 5)
        let none = try dashboard.overview(DashboardStore.Range(from: start, to: start + 60 * minute), link: "de").totals
        #expect(none.linkOuts == 0 && none.refusalRate == 0)
        store.close()
    }

    /// A tap on a link that expects no token is its own kind, `tap`: neither a visit with a token nor a
    /// refusal, though a link-out; its row in `untokened_visits` has reason `tap`, as a monthly count reads it.
    @Test(arguments: DashboardExperimentsTests.Kind.allCases)
    func tapsAreTheirOwnKindAndNoRefusal(_ kind: DashboardExperimentsTests.Kind) throws {
        let store: any TokenStore
        let dashboard: DashboardStore
        switch kind {
        case .sqlite:
            let path = StoreFixtures.temporaryPath()
            store = try SQLiteTokenStore(path: path)
            dashboard = try DashboardStore(sqlitePath: path)
        case .postgres:
            let url = try PostgresServer.createDatabase()
            _ = try PostgresTokenStore.migrate(url: url)
            store = try PostgresTokenStore(url: url)
            dashboard = try DashboardStore(postgresURL: url)
        }
        let start: Int64 = 1_800_000_000_000
        func tap(_ at: Int64, _ kind: VisitKind = .shopper) -> VisitRecord {
            .untokened(
                UntokenedVisit(link: "us", country: "us", destination: "https://a.example.com/us", reason: .tap, seenAt: at, kind: kind))
        }
        var extras = DashboardExtras()
        extras.addRefusal(link: "nl", reason: "token_not_base64", at: start + minute)
        try store.commit(
            [
                tap(start), tap(start + minute), tap(start + minute, .bot), .token(TokenBuilder.record(seenAt: start)),
                .untokened(
                    UntokenedVisit(
                        link: "nl", country: "nl", destination: "https://a.example.com/", reason: .refused(.tokenNotBase64),
                        seenAt: start + minute)),
            ], batch: BatchIdentity(instance: "t", sequence: 1), extras: extras, now: StoreFixtures.appliedAt)
        let overview = try dashboard.overview(DashboardStore.Range(from: start, to: start + 60 * minute), link: nil)
        #expect(overview.visits.filter { $0.key == "tap" }.map(\.link) == ["us"])
        // A tap is a shopper's (`Tap`): the bot's request on the link is counted apart, as the statement does.
        #expect(overview.visits.first { $0.key == "tap" }?.counts.reduce(0, +) == 2)
        #expect(overview.visits.first { $0.key == "tap-bot" }?.counts.reduce(0, +) == 1)
        #expect(overview.refusals.map(\.link) == ["nl"], "a tap is never a refusal")
        let totals = overview.totals
        #expect(
            totals.visits == 1 && totals.shoppers == 1 && totals.taps == 2 && totals.botTaps == 1 && totals.refusals == 1
                && totals.linkOuts == 5, "\(totals)")
        #expect(totals.refusalRate == 0.2)
        #expect(try dashboard.overview(DashboardStore.Range(from: start, to: start + 60 * minute), link: "us").totals.refusals == 0)
        #expect(try store.untokenedVisitCount() == 4)
        store.close()
    }

    /// The oldest bucket counted, of visits or refusals, for the default range: on both stores' SQL.
    @Test(arguments: DashboardExperimentsTests.Kind.allCases)
    func theFirstCountedBucketIsTheOldestVisitsOrRefusals(_ kind: DashboardExperimentsTests.Kind) throws {
        let store: any TokenStore
        let dashboard: DashboardStore
        switch kind {
        case .sqlite:
            let path = StoreFixtures.temporaryPath()
            store = try SQLiteTokenStore(path: path)
            dashboard = try DashboardStore(sqlitePath: path)
        case .postgres:
            let url = try PostgresServer.createDatabase()
            _ = try PostgresTokenStore.migrate(url: url)
            store = try PostgresTokenStore(url: url)
            dashboard = try DashboardStore(postgresURL: url)
        }
        let start: Int64 = 1_800_000_000_000
        #expect(try dashboard.firstCounted() == nil)
        try store.commit([.token(TokenBuilder.record(seenAt: start + minute))])
        #expect(try dashboard.firstCounted() == start)
        var extras = DashboardExtras()
        extras.addRefusal(link: "nl", reason: "missing_token", at: start - 10 * minute)
        try store.commit([], batch: BatchIdentity(instance: "t", sequence: 1), extras: extras, now: StoreFixtures.appliedAt)
        #expect(try dashboard.firstCounted() == start - 10 * minute, "the refusal's bucket, before any visit")
        store.close()
    }

    @Test func rangesKeepAboutAHundredPointsOrFewer() {
        let now: Int64 = 1_800_000_000_000
        #expect(DashboardStore.Range(from: now - 3_600_000, to: now).stepMs == 5 * minute)
        #expect(DashboardStore.Range(from: now - 86_400_000, to: now).stepMs == 15 * minute)
        #expect(DashboardStore.Range(from: now - 7 * 86_400_000, to: now).stepMs == 60 * minute)
        #expect(DashboardStore.Range(from: now - 30 * 86_400_000, to: now).stepMs == 360 * minute)
    }
}

/// A store that keeps what the writer hands it, to see extras travel.
private final class ExtrasRecordingStore: TokenStore, @unchecked Sendable {
    let lock = NSLock()
    var received: [(visits: Int, extras: DashboardExtras)] = []
    func commit(_ visits: [VisitRecord]) throws {}
    func commit(_ visits: [VisitRecord], batch: BatchIdentity, extras: DashboardExtras, now: Int64) throws {
        lock.withLock { received.append((visits.count, extras)) }
    }
    func probe() throws {}
    func forEachToken(_ body: (StoredToken) throws -> Void) throws {}
    func untokenedVisitCount() throws -> Int { 0 }
    func close() {}
}

@Suite struct RecordWriterExtrasTests {
    @Test func refusalsAloneAreCommittedWithinASecondAndRideWithTheNextBatchOtherwise() throws {
        let store = ExtrasRecordingStore()
        let writer = RecordWriter<Int>(store: store, maxPending: 100, clock: .system) { _, _ in }
        writer.start()
        writer.noteRefusal(link: "nl", reason: "missing_token", at: 1_000)
        writer.noteRefusal(link: "nl", reason: "missing_token", at: 2_000)
        writer.noteHealth(target: "https://a/", up: false, at: 3_000)
        let deadline = Date().addingTimeInterval(3)
        while store.lock.withLock({ store.received.isEmpty }) && Date() < deadline { usleep(20_000) }
        let first = try #require(store.lock.withLock { store.received.first })
        #expect(first.visits == 0)
        #expect(first.extras.refusals.values.reduce(0, +) == 2 && first.extras.health.count == 1)
        writer.noteRefusal(link: "de", reason: "unknown_app", at: 4_000)
        _ = writer.submit(.token(TokenBuilder.record()), ticket: 1)
        writer.finish()
        let all = store.lock.withLock { store.received }
        #expect(all.map(\.visits).reduce(0, +) == 1)
        #expect(all.map { $0.extras.refusals.values.reduce(0, +) }.reduce(0, +) == 3)
    }

    /// Ranges of whole-hour steps read `visit_hours` and `refusal_hours` up to the hour their end falls in,
    /// and the 5-minute buckets after: the same series as from the buckets alone, on both stores' SQL
    /// (SQLite here), over visits spread across hours, with a range ending inside an hour, and after an
    /// upgrade that fills the hours from the buckets already there.
    @Test func hourlyRowsAnswerWhatTheBucketsWould() throws {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteTokenStore(path: path)
        let start: Int64 = 1_800_000_000_000 - 1_800_000_000_000 % 86_400_000
        var batch: [VisitRecord] = []
        for index in 0..<3_000 {
            // Every 7 minutes and a bit over two weeks, three kinds, two variants, two countries.
            let kind: VisitKind = index % 3 == 0 ? .bot : .shopper
            batch.append(
                .token(
                    TokenBuilder.record(
                        seenAt: start + Int64(index) * 421_000, kind: kind, experiment: "price", variant: index % 2 == 0 ? "a" : "b",
                        country: index % 5 == 0 ? "de" : "nl")))
            if batch.count == 100 {
                // And refusals, two reasons, with the batch's last visit.
                var extras = DashboardExtras()
                extras.addRefusal(
                    link: "nl", reason: index % 200 == 99 ? "missing_token" : "unknown_app", at: start + Int64(index) * 421_000, count: 3)
                try store.commit(
                    batch, batch: BatchIdentity(instance: "t", sequence: Int64(index)), extras: extras, now: StoreFixtures.appliedAt)
                batch = []
            }
        }
        let dashboard = try DashboardStore(sqlitePath: path)
        let end = start + 3_000 * 421_000
        // A week of hourly steps ending 17 minutes into an hour, and a month of 6-hour steps.
        for range in [
            DashboardStore.Range(from: end - 7 * 86_400_000, to: end - 43 * 60_000), DashboardStore.Range(from: start, to: end + 1),
        ] {
            #expect(range.stepMs % DashboardBuckets.hourMs == 0)
            #expect(DashboardStore.hoursUntil(range) > range.from)
            let fromHours = try dashboard.overview(range, link: nil)
            let fromBuckets = try Self.overviewFromBucketsAlone(dashboard, range)
            #expect(fromHours == fromBuckets)
            #expect(fromHours.visits.reduce(0) { $0 + $1.counts.reduce(0, +) } > 0)
            #expect(fromHours.refusals.map(\.key) == ["missing_token", "unknown_app"])
            #expect(
                try dashboard.experimentOutcomes(range, link: nil).map(\.visits)
                    == fromBuckets.experiments.map(\.visits))
        }
        store.close()

        // An upgrade from schema 6 fills the hours from its buckets (the visits' at 7, the refusals' at 8).
        let connection = try SQLiteConnection(path: path, readOnly: false)
        let hourRows = try connection.integer("SELECT count(*) FROM visit_hours")
        let refusalHourRows = try connection.integer("SELECT count(*) FROM refusal_hours")
        try connection.execute("\(StoreFixtures.undoSchemaSeven) PRAGMA user_version = 6;")
        _ = try SQLiteTokenStore(path: path)
        #expect(try connection.integer("SELECT count(*) FROM visit_hours") == hourRows)
        #expect(try connection.integer("SELECT sum(visits) FROM visit_hours") == 3_000)
        #expect(try connection.integer("SELECT count(*) FROM refusal_hours") == refusalHourRows)
        #expect(try connection.integer("SELECT sum(refusals) FROM refusal_hours") == 90)
    }

    /// The overview as it was read before `visit_hours`: every row from `visit_buckets`.
    static func overviewFromBucketsAlone(_ dashboard: DashboardStore, _ range: DashboardStore.Range) throws -> DashboardStore.Overview {
        // Hours until `from`: none, so the same queries read the buckets alone.
        return try dashboard.overview(range, link: nil, hoursUntil: range.from)
    }
}
