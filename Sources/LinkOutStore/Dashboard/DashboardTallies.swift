import LinkOutCore

/// What the operator dashboard reads instead of scanning visits: counts per 5-minute bucket, kept in the
/// store so they survive restarts and add up across instances. Written by the writer, in each batch's own
/// transaction, from counts aggregated here in Swift: a batch of 500 visits costs one multi-row upsert,
/// not 500.
public enum DashboardBuckets {
    /// The width of one bucket. The API sums buckets into wider steps for longer ranges.
    public static let widthMs: Int64 = 300_000

    /// The start of the bucket `ms` falls in.
    public static func start(of ms: Int64) -> Int64 {
        floor(ms, to: widthMs)
    }

    /// The width of a `visit_hours` row: twelve buckets.
    public static let hourMs: Int64 = 3_600_000

    /// The start of the hour `ms` falls in.
    public static func hourStart(of ms: Int64) -> Int64 {
        floor(ms, to: hourMs)
    }

    /// `ms` rounded down to a multiple of `width`, before 1970 too.
    private static func floor(_ ms: Int64, to width: Int64) -> Int64 {
        ms - ((ms % width) + width) % width
    }
}

/// A row key of one of the dashboard's counts, kept twice: per 5-minute bucket (`<table>_buckets`) and per
/// hour (`<table>_hours`), with the same columns (`DashboardStore.countsTable`).
protocol CountKey: Hashable, Comparable {
    /// `visit` or `refusal`.
    static var table: String { get }
    /// The key's columns after `bucket_start`, all text, in the order `appendKey` binds them.
    static var keyColumns: [String] { get }
    /// The column holding the count.
    static var countColumn: String { get }
    var bucketStart: Int64 { get set }
    func appendKey(to values: inout [SQLValue])
}

/// One row key of `visit_buckets` and `visit_hours`. `kind` is shopper, prefetch, head, bot, `untokened`
/// (a refused token sent on by `onInvalidToken: redirect`), `tap` (a tap, `Tap`, on a link that expects no
/// token) or `tap-bot` (a bot's, prefetch's or HEAD's request on such a link); empty strings stand for "no
/// experiment".
struct VisitBucketKey: CountKey {
    /// The kind of a visit whose refused token was sent on without it: a refusal too (`noteRefusal`), and
    /// not one of the visits with a token (`DashboardStore.Totals`).
    static let untokenedKind = "untokened"
    /// The kind of a tap (`Tap`: a shopper's) on a link that expects no token: neither a refusal nor a
    /// visit with a token. Buckets written before bots were kept apart count theirs here too.
    static let tapKind = "tap"
    /// The kind of a request by a bot, a prefetch or a HEAD on a link that expects no token: no tap, and
    /// no visit with a token either; counted apart so the dashboard's taps are the statement's.
    static let tapBotKind = "tap-bot"
    /// The kinds of untokened visits: none is a visit with a token.
    static let untokenedKinds: Set<String> = [untokenedKind, tapKind, tapBotKind]
    static let table = "visit"
    static let keyColumns = ["link", "kind", "country", "destination", "experiment", "variant"]
    static let countColumn = "visits"

    var bucketStart: Int64
    var link: String
    var kind: String
    var country: String
    var destination: String
    var experiment: String
    var variant: String

    static func < (a: Self, b: Self) -> Bool {
        (a.bucketStart, a.link, a.kind, a.country, a.destination, a.experiment) < (
            b.bucketStart, b.link, b.kind, b.country, b.destination, b.experiment
        )
            || ((a.bucketStart, a.link, a.kind, a.country, a.destination, a.experiment) == (
                b.bucketStart, b.link, b.kind, b.country, b.destination, b.experiment
            )
                && a.variant < b.variant)
    }

    init(_ visit: VisitRecord) {
        switch visit {
        case .token(let record):
            self.init(
                bucketStart: DashboardBuckets.start(of: record.seenAt), link: record.link, kind: record.kind.rawValue,
                country: record.country, destination: record.destination, experiment: record.experiment ?? "",
                variant: record.variant ?? "")
        case .untokened(let visit):
            self.init(
                bucketStart: DashboardBuckets.start(of: visit.seenAt), link: visit.link,
                kind: Tap.isTap(visit) ? Self.tapKind : visit.reason == .tap ? Self.tapBotKind : Self.untokenedKind,
                country: visit.country, destination: visit.destination, experiment: "", variant: "")
        }
    }

    func appendKey(to values: inout [SQLValue]) {
        values += [.text(link), .text(kind), .text(country), .text(destination), .text(experiment), .text(variant)]
    }

    init(bucketStart: Int64, link: String, kind: String, country: String, destination: String, experiment: String, variant: String) {
        self.bucketStart = bucketStart
        self.link = link
        self.kind = kind
        self.country = country
        self.destination = destination
        self.experiment = experiment
        self.variant = variant
    }
}

/// What a batch carries besides its visits: refusals counted per bucket, link and reason (loop threads
/// add to it under the writer's lock; refusals are not records, so nothing waits for them), and the
/// health checker's up/down changes (rare). Committed with the next batch, or within a second when no
/// visit comes.
public struct DashboardExtras: Sendable, Equatable {
    struct RefusalKey: CountKey, Sendable {
        static let table = "refusal"
        static let keyColumns = ["link", "reason"]
        static let countColumn = "refusals"

        var bucketStart: Int64
        var link: String
        var reason: String
        static func < (a: Self, b: Self) -> Bool { (a.bucketStart, a.link, a.reason) < (b.bucketStart, b.link, b.reason) }

        func appendKey(to values: inout [SQLValue]) {
            values += [.text(link), .text(reason)]
        }
    }

    /// A destination health change, as the checker saw it.
    public struct HealthChange: Sendable, Equatable {
        public var target: String
        public var up: Bool
        public var at: Int64
    }

    var refusals: [RefusalKey: Int64] = [:]
    var health: [HealthChange] = []

    public init() {}

    public var isEmpty: Bool { refusals.isEmpty && health.isEmpty }

    public mutating func addRefusal(link: String, reason: String, at ms: Int64, count: Int64 = 1) {
        refusals[RefusalKey(bucketStart: DashboardBuckets.start(of: ms), link: link, reason: reason), default: 0] += count
    }

    public mutating func addHealth(target: String, up: Bool, at ms: Int64) {
        health.append(HealthChange(target: target, up: up, at: ms))
    }

    /// Puts back what a failed commit did not keep.
    public mutating func merge(_ other: DashboardExtras) {
        for (key, count) in other.refusals { refusals[key, default: 0] += count }
        health = other.health + health
    }
}

/// The dashboard's writes, one SQL for both stores through `ReportingDatabase`, inside the caller's
/// transaction. On PostgreSQL keys are sorted so that instances upserting the same buckets lock rows in
/// the same order and cannot deadlock.
enum DashboardWrites {
    /// Rows per statement on PostgreSQL, where each statement is a round trip: 8 parameters a row stays far
    /// below its limits.
    static let rowsPerStatement = 500

    /// How many of `remaining` rows the next statement takes. On SQLite, a power of two up to 256: the
    /// statement's text then takes one of nine shapes, each prepared once and kept
    /// (`SQLiteConnection.withCachedStatement`), where any row count would make a text per count and, past
    /// the cache's size, a prepare per batch. On PostgreSQL, where a statement is a round trip, as many as
    /// `rowsPerStatement` allows.
    static func rowsInNextStatement(_ remaining: Int, _ database: any ReportingDatabase) -> Int {
        if database.isPostgres { return min(remaining, rowsPerStatement) }
        var rows = 1
        while rows * 2 <= min(remaining, 256) { rows *= 2 }
        return rows
    }

    static func write(_ visits: [VisitRecord], extras: DashboardExtras, to database: any ReportingDatabase) throws {
        if !visits.isEmpty {
            // A registration is no visit of a link: the visits' charts leave it out. Visits that follow each
            // other mostly share their key (a link's shoppers in one bucket): a run of equal keys is counted
            // first and hashed once, where hashing its seven strings per visit was most of this loop.
            var counts: [VisitBucketKey: Int64] = [:]
            var last: VisitBucketKey?
            var run: Int64 = 0
            for visit in visits {
                if case .token(let record) = visit, !record.kind.isVisit { continue }
                let key = VisitBucketKey(visit)
                if key == last {
                    run += 1
                    continue
                }
                if let last { counts[last, default: 0] += run }
                last = key
                run = 1
            }
            if let last { counts[last, default: 0] += run }
            try upsertBucketsAndHours(counts, database)
        }
        try upsertBucketsAndHours(extras.refusals, database)
        for change in extras.health {
            try database.query(
                "INSERT INTO destination_health (target, up, at) VALUES (?1, ?2, ?3)",
                [.text(change.target), .integer(change.up ? 1 : 0), .integer(change.at)])
        }
    }

    /// Adds `counts` to their buckets, and summed by the hour to their hours, for long ranges
    /// (`DashboardStore.countRows`). A batch spans moments, so its hours are mostly its buckets' keys again:
    /// about one more upsert per batch.
    private static func upsertBucketsAndHours<Key: CountKey>(_ counts: [Key: Int64], _ database: any ReportingDatabase) throws {
        if counts.isEmpty { return }
        try upsert(counts, hours: false, database)
        var hours: [Key: Int64] = [:]
        for (key, count) in counts {
            var hour = key
            hour.bucketStart = DashboardBuckets.hourStart(of: key.bucketStart)
            hours[hour, default: 0] += count
        }
        try upsert(hours, hours: true, database)
    }

    /// Adds `counts` to `table`, in statements of `rowsInNextStatement` rows (SQLite takes at most 32,766
    /// parameters, and refusals held back after a failed commit accumulate). Sorted by key on PostgreSQL,
    /// whose instances upsert the same rows concurrently; SQLite has one writer at a time, and sorting seven
    /// strings per key was a third of these writes' time there (perf, bench/RESULTS.md).
    private static func upsert<Key: CountKey>(_ counts: [Key: Int64], hours: Bool, _ database: any ReportingDatabase) throws {
        let rows = database.isPostgres ? counts.sorted { $0.key < $1.key } : Array(counts)
        let columnsPerRow = Key.keyColumns.count + 2
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<(start + rowsInNextStatement(rows.count - start, database))]
            var values: [SQLValue] = []
            values.reserveCapacity(chunk.count * columnsPerRow)
            for (key, count) in chunk {
                values.append(.integer(key.bucketStart))
                key.appendKey(to: &values)
                values.append(.integer(count))
            }
            try database.query(upsertSQL(Key.self, hours: hours, rows: chunk.count), values)
            start += chunk.count
        }
    }

    /// A statement's text: the same few shapes every batch (table, rows), made once each and kept, where
    /// interpolating the columns and placeholders again cost more than the upsert (perf, bench/RESULTS.md).
    private static func upsertSQL<Key: CountKey>(_: Key.Type, hours: Bool, rows: Int) -> String {
        let shape = SQLShape(key: ObjectIdentifier(Key.self), hours: hours, rows: rows)
        if let sql = sqlTexts.withLock({ $0[shape] }) { return sql }
        let table = "\(Key.table)_\(hours ? "hours" : "buckets")"
        let keyColumns = (["bucket_start"] + Key.keyColumns).joined(separator: ", ")
        let sql = """
            INSERT INTO \(table) (\(keyColumns), \(Key.countColumn))
            VALUES \(placeholders(rows: rows, columns: Key.keyColumns.count + 2))
            ON CONFLICT (\(keyColumns)) DO UPDATE SET \(Key.countColumn) = \(table).\(Key.countColumn) + excluded.\(Key.countColumn)
            """
        // Bounded: two key types, two tables, nine row counts on SQLite (up to 500 on PostgreSQL).
        sqlTexts.withLock { texts in
            if texts.count >= 4096 { texts.removeAll() }
            texts[shape] = sql
        }
        return sql
    }

    private struct SQLShape: Hashable {
        let key: ObjectIdentifier
        let hours: Bool
        let rows: Int
    }

    private static let sqlTexts = Locked<[SQLShape: String]>([:])

    /// `(?1, ?2, …), (…)`: numbered, which both databases' binders take.
    static func placeholders(rows: Int, columns: Int) -> String {
        var text = ""
        var parameter = 1
        for row in 0..<rows {
            text += row == 0 ? "(" : ", ("
            for column in 0..<columns {
                if column > 0 { text += ", " }
                text += "?\(parameter)"
                parameter += 1
            }
            text += ")"
        }
        return text
    }
}
