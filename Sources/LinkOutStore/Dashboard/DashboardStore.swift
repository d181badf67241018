import Foundation
import LinkOutCore

/// The operator dashboard's reads: the bucket tables the writer keeps (`DashboardWrites`), destination
/// health changes, the latest visits, and reporting's state through `SQLReportingStore`'s own status
/// queries. One SQL for both stores through `ReportingDatabase`; its own connection (the admin thread's),
/// never the writer's.
public final class DashboardStore {
    let database: any ReportingDatabase
    /// Reporting's status queries, on the same connection.
    public let reporting: SQLReportingStore

    /// The dashboard's tables in SQLite, created by schema version 6.
    static let sqliteSchema = """
        -- Operator dashboard (issue 15): counts per 5-minute bucket, upserted once per writer batch.
        \(countsTable(VisitBucketKey.self, "visit_buckets", postgres: false))
        \(countsTable(DashboardExtras.RefusalKey.self, "refusal_buckets", postgres: false))
        -- One row per up/down change the health checker saw (rare).
        CREATE TABLE destination_health (
            target TEXT NOT NULL,
            up INTEGER NOT NULL,
            at INTEGER NOT NULL
        );
        CREATE INDEX destination_health_at ON destination_health (at);
        """

    /// Schema version 7 in SQLite: the visits by the hour (`hours`), the line items by arrival, and
    /// where a token's first shopper's visit went, kept on its `report_tokens` row (by
    /// `SQLReportingStore.syncTokens`): the variant its purchases count for (`PurchaseTally`, schema 8),
    /// found by the token's key. Before, the purchases scanned every visit (`visits` has no index on the
    /// id): 3 s over 10 million tokens (bench/RESULTS.md). PostgreSQL's `tokens` table already has this.
    ///
    /// `shopper_visit` is that visit's id: a visit with a smaller one replaces it, whatever order the visits
    /// are read in. The visits brought into reporting before the upgrade (up to `shoppers_until`) are read
    /// again for their first shoppers a chunk at a time by the reporter's rounds
    /// (`SQLReportingStore.backfillFirstShoppers`), not here: one pass over ten million visits grouped by
    /// their random ids took minutes and tens of GB of temporary reads, and would hold up the start.
    static let sqliteSchemaSeven = """
        ALTER TABLE report_tokens ADD COLUMN shopper_visit INTEGER;
        ALTER TABLE report_tokens ADD COLUMN shopper_seen INTEGER;
        ALTER TABLE report_tokens ADD COLUMN shopper_link TEXT;
        ALTER TABLE report_tokens ADD COLUMN experiment TEXT;
        ALTER TABLE report_tokens ADD COLUMN variant TEXT;
        ALTER TABLE report_sync ADD COLUMN shoppers_from INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE report_sync ADD COLUMN shoppers_until INTEGER NOT NULL DEFAULT 0;
        UPDATE report_sync SET shoppers_until = last_visit_id;
        \(hours(VisitBucketKey.self, postgres: false))
        \(lineItemsByArrival)
        """

    /// PostgreSQL's migration 7: the visits by the hour, and the line items by arrival.
    static let postgresMigrationSeven = """
        \(hours(VisitBucketKey.self, postgres: true))
        \(lineItemsByArrival)
        """

    /// `<table>_buckets` summed by the hour into a new `<table>_hours` (schema and migration 7 for the
    /// visits, 8 for the refusals), written with them by the writer (`DashboardWrites`) and read for ranges
    /// whose steps are hours (`countRows`); filled from the buckets already there.
    private static func hours<Key: CountKey>(_ key: Key.Type, postgres: Bool) -> String {
        let columns = Key.keyColumns.joined(separator: ", ")
        return """
            \(countsTable(key, "\(Key.table)_hours", postgres: postgres))
            INSERT INTO \(Key.table)_hours (bucket_start, \(columns), \(Key.countColumn))
            SELECT bucket_start - bucket_start % \(DashboardBuckets.hourMs), \(columns), sum(\(Key.countColumn))
            FROM \(Key.table)_buckets GROUP BY bucket_start - bucket_start % \(DashboardBuckets.hourMs), \(columns);
            """
    }

    /// A table of `Key`'s counts (`visit_buckets`, `visit_hours`, `refusal_buckets`, `refusal_hours`): the
    /// key's text columns after `bucket_start`, then the count, in either store's types.
    private static func countsTable<Key: CountKey>(_ key: Key.Type, _ name: String, postgres: Bool) -> String {
        let type = SQLColumnTypes(postgres: postgres)
        let columns = Key.keyColumns.map { "    \($0) \(type.text) NOT NULL,\n" }.joined()
        return """
            CREATE TABLE \(name) (
                bucket_start \(type.integer) NOT NULL,
            \(columns)    \(Key.countColumn) \(type.integer) NOT NULL,
                PRIMARY KEY (bucket_start, \(Key.keyColumns.joined(separator: ", ")))
            \(type.tableEnd);
            """
    }

    /// SQLite schema 8: the experiments' purchases counted as line items are stored (`PurchaseTally`), the
    /// last slow counts kept, and the refusals by the hour.
    static let sqliteSchemaEight = """
        \(PurchaseTally.sqliteSchemaEight)
        \(savedCountsTable(postgres: false))
        \(hours(DashboardExtras.RefusalKey.self, postgres: false))
        """

    /// PostgreSQL's migration 8: the same as SQLite's schema 8.
    static let postgresMigrationEight = """
        \(PurchaseTally.postgresMigrationEight)
        \(savedCountsTable(postgres: true))
        \(hours(DashboardExtras.RefusalKey.self, postgres: true))
        """

    /// Schema 7 and migration 7: the experiments' purchases of a short range started from the line items
    /// received since a day before it, not from every line item ever stored. Dropped by 8, whose tally
    /// (`PurchaseTally`) they read instead.
    static let lineItemsByArrival = "CREATE INDEX line_items_received ON line_items (received_at);"

    /// The same tables in PostgreSQL, created by migration 6.
    static let postgresSchema = """
        -- Operator dashboard (issue 15): counts per 5-minute bucket, upserted once per writer batch.
        \(countsTable(VisitBucketKey.self, "visit_buckets", postgres: true))
        \(countsTable(DashboardExtras.RefusalKey.self, "refusal_buckets", postgres: true))
        CREATE TABLE destination_health (
            target TEXT NOT NULL,
            up BIGINT NOT NULL,
            at BIGINT NOT NULL
        );
        CREATE INDEX destination_health_at ON destination_health (at);
        """

    /// Schema 8 and migration 8: the last count the dashboard made of what is slow to count (reporting's
    /// states read every token: 22 s over ten million), kept so that the first page after a start, or on
    /// another instance, answers with it at once, saying when it was made, while the next is counted.
    static func savedCountsTable(postgres: Bool) -> String {
        let type = SQLColumnTypes(postgres: postgres)
        return """
            CREATE TABLE dashboard_counts (
                name TEXT PRIMARY KEY,
                counted_at \(type.integer) NOT NULL,
                -- how long the count took, which decides how long it is answered before the next
                took_ms \(type.integer) NOT NULL,
                -- the API's JSON answer
                body TEXT NOT NULL
            );
            """
    }

    /// A count kept in `dashboard_counts`.
    public struct SavedCount: Sendable, Equatable {
        public var countedAt: Int64
        public var tookMs: Int64
        public var body: String

        public init(countedAt: Int64, tookMs: Int64, body: String) {
            self.countedAt = countedAt
            self.tookMs = tookMs
            self.body = body
        }
    }

    public func savedCount(_ name: String) throws -> SavedCount? {
        var found: SavedCount?
        try database.query("SELECT counted_at, took_ms, body FROM dashboard_counts WHERE name = ?1", [.text(name)]) { row in
            found = SavedCount(countedAt: try row.int64(0), tookMs: try row.int64(1), body: try row.text(2))
        }
        return found
    }

    /// Keeps `count` as the last of `name`, unless a newer one is kept already (another instance's).
    public func saveCount(_ name: String, _ count: SavedCount) throws {
        try database.query(
            """
            INSERT INTO dashboard_counts (name, counted_at, took_ms, body) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (name) DO UPDATE SET counted_at = excluded.counted_at, took_ms = excluded.took_ms, body = excluded.body
            WHERE excluded.counted_at > dashboard_counts.counted_at
            """, [.text(name), .integer(count.countedAt), .integer(count.tookMs), .text(count.body)])
    }

    public init(sqlitePath path: String) throws {
        let store = try SQLReportingStore(sqlitePath: path)
        reporting = store
        database = store.database
    }

    public init(postgresURL url: String, timeoutMs: Int? = nil) throws {
        let store = try SQLReportingStore(postgresURL: url, timeoutMs: timeoutMs)
        reporting = store
        database = store.database
    }

    /// A time range cut into `steps` equal steps of `stepMs`, from `from` (aligned on a step).
    public struct Range: Sendable, Equatable {
        public var from: Int64
        public var to: Int64
        public var stepMs: Int64

        public var steps: Int { Int((to - from + stepMs - 1) / stepMs) }

        /// Steps a chart can show on a phone: about 12 to 200 points whatever the range.
        static let niceSteps: [Int64] = [5, 15, 60, 180, 360, 720, 1440].map { $0 * 60_000 }

        public init(from: Int64, to: Int64) {
            let span = max(to - from, DashboardBuckets.widthMs)
            stepMs = Self.niceSteps.first { span / $0 <= 200 } ?? 1_440 * 60_000
            self.from = from - ((from % stepMs) + stepMs) % stepMs
            self.to = max(to, self.from + stepMs)
        }
    }

    public struct Series: Codable, Sendable, Equatable {
        public var link: String
        public var key: String
        public var counts: [Int64]
    }

    public struct Share: Codable, Sendable, Equatable {
        public var link: String
        public var key: String
        public var visits: Int64
    }

    public struct VariantCount: Codable, Sendable, Equatable {
        public var link: String
        public var experiment: String
        public var variant: String
        public var visits: Int64
        public var counts: [Int64]
    }

    public struct HealthPeriod: Codable, Sendable, Equatable {
        public var from: Int64
        public var to: Int64
        public var up: Bool
    }

    public struct TargetHealth: Codable, Sendable, Equatable {
        public var target: String
        public var periods: [HealthPeriod]
    }

    /// The range's headline numbers, summed from the series the charts draw, so the two always agree.
    public struct Totals: Codable, Sendable, Equatable {
        /// Visits recorded with their token, of every kind but `untokened`, `tap` and `tap-bot` (a token
        /// visited twice counts twice): each carries a token Apple must hear about.
        public var visits: Int64
        /// Of those, shoppers' (the hits).
        public var shoppers: Int64
        /// Taps (`Tap`: shoppers') on links that expect no token (`token: "none"`): sent on, never refused,
        /// nothing to report; the statement's taps, counted by the same rule.
        public var taps: Int64
        /// Bots', prefetches' and HEADs' requests on those links: sent on too, but no tap.
        public var botTaps: Int64
        /// Link-outs refused: answered 400, or sent on without their token (`untokened`). Never a tap.
        public var refusals: Int64
        /// Every link-out that reached a link: `visits`, `taps`, `botTaps` and `refusals` (an untokened
        /// visit is in the last).
        public var linkOuts: Int64
        /// `refusals` over `linkOuts`; 0 when none came.
        public var refusalRate: Double

        init(visits series: [Series], refusals refused: [Series]) {
            func sum(_ list: [Series]) -> Int64 { list.reduce(0) { $0 + $1.counts.reduce(0, +) } }
            visits = sum(series.filter { !VisitBucketKey.untokenedKinds.contains($0.key) })
            shoppers = sum(series.filter { $0.key == VisitKind.shopper.rawValue })
            taps = sum(series.filter { $0.key == VisitBucketKey.tapKind })
            botTaps = sum(series.filter { $0.key == VisitBucketKey.tapBotKind })
            refusals = sum(refused)
            linkOuts = visits + taps + botTaps + refusals
            refusalRate = linkOuts == 0 ? 0 : Double(refusals) / Double(linkOuts)
        }
    }

    /// What `/api/overview` answers: every series has one count per step, starting at `from`.
    public struct Overview: Codable, Sendable, Equatable {
        public var from: Int64
        public var to: Int64
        public var stepMs: Int64
        public var totals: Totals
        /// Shoppers' visits, prefetches, HEADs, bots, untokened redirects, taps: per link and kind.
        public var visits: [Series]
        /// Refused tokens: per link and reason.
        public var refusals: [Series]
        /// Shoppers' visits over the range, per link and destination, and per link and country.
        public var destinations: [Share]
        public var countries: [Share]
        public var experiments: [VariantCount]
        public var health: [TargetHealth]
    }

    /// Everything the charts of one page need over `range`, for every link or only `link`.
    public func overview(_ range: Range, link: String?) throws -> Overview {
        try overview(range, link: link, hoursUntil: Self.hoursUntil(range))
    }

    /// `hoursUntil`: where the visits' rows go from `visit_hours` to `visit_buckets` (tests compare).
    func overview(_ range: Range, link: String?, hoursUntil split: Int64) throws -> Overview {
        let steps = range.steps
        let base: [SQLValue] = [.integer(range.from), .integer(range.to), .integer(range.stepMs), .text(link ?? "")]
        // The queries read `visitRows` or the refusals' `countRows` (from ?1 to ?2, hours until ?5) and
        // filter the link (?4).
        let visits = base + [.integer(split)]
        let visitWindow = "FROM \(Self.visitRows(from: 1, to: 2, split: 5)) WHERE (?4 = '' OR link = ?4)"
        func series(_ sql: String, _ parameters: [SQLValue]) throws -> [Series] {
            var found: [String: Series] = [:]
            try database.query(sql, parameters) { row in
                let slot = Int(try row.int64(0))
                let link = try row.text(1)
                let key = try row.text(2)
                guard slot >= 0, slot < steps else { return }
                found["\(link)\u{0}\(key)", default: Series(link: link, key: key, counts: Array(repeating: 0, count: steps))]
                    .counts[slot] += try row.int64(3)
            }
            return found.values.sorted { ($0.link, $0.key) < ($1.link, $1.key) }
        }
        let visitSeries = try series(
            """
            SELECT (bucket_start - ?1) / ?3, link, kind, sum(visits) \(visitWindow) GROUP BY 1, 2, 3
            """, visits)
        let refusals = try series(
            """
            SELECT (bucket_start - ?1) / ?3, link, reason, sum(refusals)
            FROM \(Self.countRows(DashboardExtras.RefusalKey.self, from: 1, to: 2, split: 5))
            WHERE (?4 = '' OR link = ?4) GROUP BY 1, 2, 3
            """, visits)
        func shares(_ column: String) throws -> [Share] {
            var found: [Share] = []
            try database.query(
                """
                SELECT link, \(column), sum(visits) \(visitWindow)
                AND kind = 'shopper' AND ?3 > 0 GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2
                """, visits
            ) { row in
                found.append(Share(link: try row.text(0), key: try row.text(1), visits: try row.int64(2)))
            }
            return found
        }
        let destinations = try shares("destination")
        let countries = try shares("country")
        var experiments: [String: VariantCount] = [:]
        try database.query(
            """
            SELECT (bucket_start - ?1) / ?3, link, experiment, variant, sum(visits) \(visitWindow)
            AND kind = 'shopper' AND experiment <> '' GROUP BY 1, 2, 3, 4
            """, visits
        ) { row in
            let slot = Int(try row.int64(0))
            let count = try row.int64(4)
            let key = [try row.text(1), try row.text(2), try row.text(3)]
            guard slot >= 0, slot < steps else { return }
            var entry =
                experiments[key.joined(separator: "\u{0}")]
                ?? VariantCount(
                    link: key[0], experiment: key[1], variant: key[2], visits: 0, counts: Array(repeating: 0, count: steps))
            entry.visits += count
            entry.counts[slot] += count
            experiments[key.joined(separator: "\u{0}")] = entry
        }
        return Overview(
            from: range.from, to: range.to, stepMs: range.stepMs, totals: Totals(visits: visitSeries, refusals: refusals),
            visits: visitSeries, refusals: refusals,
            destinations: destinations, countries: countries,
            experiments: experiments.values.sorted { ($0.link, $0.experiment, $0.variant) < ($1.link, $1.experiment, $1.variant) },
            health: try health(range))
    }

    /// The start of the oldest 5-minute bucket holding a visit or a refusal; nil while nothing is counted.
    /// Each is the first column of its table's primary key, so this reads two index entries.
    public func firstCounted() throws -> Int64? {
        var first: Int64?
        for table in [VisitBucketKey.table, DashboardExtras.RefusalKey.table] {
            try database.query("SELECT min(bucket_start) FROM \(table)_buckets", []) { row in
                if let start = try row.optionalInt64(0) { first = min(first ?? start, start) }
            }
        }
        return first
    }

    /// The visit counts between parameters `from` and `to` as rows of `visit_buckets`' columns: from
    /// `visit_hours` before parameter `split` (`hoursUntil`) and from the 5-minute buckets after it. Over 30
    /// days that reads a twelfth of the rows: the overview took 310-320 ms on 236,375 buckets of 10 million
    /// visits (bench/RESULTS.md), nearly all of it reading them.
    static func visitRows(from: Int, to: Int, split: Int) -> String {
        countRows(VisitBucketKey.self, from: from, to: to, split: split)
    }

    /// `visitRows` for either count: `<table>_hours` before `split`, `<table>_buckets` after it.
    static func countRows<Key: CountKey>(_ key: Key.Type, from: Int, to: Int, split: Int) -> String {
        let columns = (["bucket_start"] + Key.keyColumns + [Key.countColumn]).joined(separator: ", ")
        return """
            (SELECT \(columns) FROM \(Key.table)_hours
                WHERE bucket_start >= ?\(from) AND bucket_start < ?\(split)
            UNION ALL
            SELECT \(columns) FROM \(Key.table)_buckets
                WHERE bucket_start >= ?\(split) AND bucket_start < ?\(to)) AS counted
            """
    }

    /// Where `visitRows` goes from hours to buckets: a range of whole-hour steps starts on an hour
    /// (`Range` aligns `from` on its step) and reads hours up to the hour `to` falls in, whose rows may
    /// hold visits after `to`; shorter steps read buckets only.
    static func hoursUntil(_ range: Range) -> Int64 {
        guard range.stepMs % DashboardBuckets.hourMs == 0 else { return range.from }
        return max(range.from, DashboardBuckets.hourStart(of: range.to))
    }

    /// Up and down periods per target within the range: each target's state at `from` is its last change
    /// before it (up when the checker never saw it change).
    func health(_ range: Range) throws -> [TargetHealth] {
        var changes: [String: [(up: Bool, at: Int64)]] = [:]
        try database.query(
            "SELECT target, up, at FROM destination_health WHERE at < ?1 ORDER BY target, at",
            [.integer(range.to)]
        ) { row in
            changes[try row.text(0), default: []].append((try row.int64(1) != 0, try row.int64(2)))
        }
        return changes.keys.sorted().map { target in
            var periods: [HealthPeriod] = []
            var state = true
            var since = range.from
            for change in changes[target]! {
                if change.at <= range.from {
                    state = change.up
                    continue
                }
                if change.up != state {
                    periods.append(HealthPeriod(from: since, to: change.at, up: state))
                    state = change.up
                    since = change.at
                }
            }
            periods.append(HealthPeriod(from: since, to: range.to, up: state))
            return TargetHealth(target: target, periods: periods)
        }
    }

    /// One row of the latest visits: the id is the caller's to truncate.
    public struct LatestVisit: Codable, Sendable, Equatable {
        public var at: Int64
        public var id: String
        public var link: String
        public var kind: String
        public var country: String
        public var destination: String
        public var variant: String?
    }

    public struct LatestRefusal: Codable, Sendable, Equatable {
        public var bucketStart: Int64
        public var link: String
        public var reason: String
        public var refusals: Int64
    }

    /// The newest visits (SQLite: rows of `visits`; PostgreSQL: tokens by first seen, the table it keeps),
    /// and the newest refusal buckets.
    public func latest(link: String?, limit: Int) throws -> (visits: [LatestVisit], refusals: [LatestRefusal]) {
        var visits: [LatestVisit] = []
        let filter: [SQLValue] = [.text(link ?? ""), .integer(Int64(limit))]
        let sql =
            database.isPostgres
            ? """
            SELECT first_seen, external_purchase_id, link, CASE WHEN hits > 0 THEN 'shopper' ELSE 'other' END, country,
                destination, variant FROM tokens WHERE (?1 = '' OR link = ?1) ORDER BY first_seen DESC LIMIT ?2
            """
            : """
            SELECT first_seen, external_purchase_id, link, kind, country, destination, variant FROM visits
            WHERE (?1 = '' OR link = ?1) ORDER BY id DESC LIMIT ?2
            """
        try database.query(sql, filter) { row in
            visits.append(
                LatestVisit(
                    at: try row.int64(0), id: try row.text(1), link: try row.text(2), kind: try row.text(3),
                    country: try row.text(4), destination: try row.text(5), variant: try row.optionalText(6)))
        }
        var refusals: [LatestRefusal] = []
        try database.query(
            """
            SELECT bucket_start, link, reason, refusals FROM refusal_buckets
            WHERE (?1 = '' OR link = ?1) ORDER BY bucket_start DESC, refusals DESC LIMIT ?2
            """, filter
        ) { row in
            refusals.append(
                LatestRefusal(
                    bucketStart: try row.int64(0), link: try row.text(1), reason: try row.text(2), refusals: try row.int64(3)))
        }
        return (visits, refusals)
    }
}
