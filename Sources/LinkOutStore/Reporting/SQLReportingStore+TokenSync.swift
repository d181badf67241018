import Foundation
import LinkOutCore

/// The tokens recorded by the gateway's writer, brought into reporting's `report_tokens` (SQLite; on
/// PostgreSQL a trigger does it, see the class): what every other side of reporting reads first.
extension SQLReportingStore {
    /// Visits brought into reporting per transaction: each holds the write lock, which the gateway's
    /// writer waits for, so it stays short: 1,000 inserts into the token index took 42-54 ms with 2 million
    /// tokens known (random keys, see SQLiteTokenStore), the longest a shopper's commit then waits.
    static let syncChunk: Int64 = 1_000

    /// Brings every visit committed so far into reporting, in slices the gateway's writer passes between.
    ///
    /// Each slice holds SQLite's write lock, which every shopper's commit waits for. Back to back, slices of
    /// 1,000 visits (42-54 ms each once the token index outgrew the cache) held the writer off for seconds
    /// (`bench/latency`'s plot, bench/RESULTS.md): SQLite's busy handler sleeps 1, 2, 5 … 100 ms between
    /// tries and missed every gap. Now a slice's size follows how long the last took (about 2 ms under the
    /// lock), the next waits as long as this one took, and the writer looks for the lock every 100 µs
    /// (`SQLiteTokenStore`). A slice commits with `synchronous=NORMAL`, no fsync of its own under the lock:
    /// what it writes is derived from committed visits, and the next fsync of the WAL (the writer's next
    /// commit, the checkpointer's next round within 250 ms, or this connection's next `FULL` write, always
    /// before anything is reported from it) takes it along; a crash before that loses the slice and its
    /// `report_sync` mark together, and the next sync does it again.
    ///
    /// While it runs, its commits checkpoint only a WAL of `syncCheckpointFrames` or more. With SQLite's
    /// default of 1,000 frames, every slice's commit into a WAL past that size (a WAL starts over only
    /// after a complete checkpoint, so under load it stays larger) copied what the gateway's checkpointer
    /// had not yet and fsynced the database file: a checkpoint and an fsync every few milliseconds, each
    /// meeting the writer's fsync on the disk. In `serve` the gateway's checkpointer copies the WAL every
    /// 250 ms; without a gateway (a command on a stopped one's store), the sync checkpoints itself each
    /// 64 MiB of WAL and the WAL starts over. And its temporary files stay in memory: each slice's upsert
    /// keeps a statement journal (the pages it changes, to undo the statement alone), which past 64 KiB
    /// SQLite spilled to a new file in /var/tmp, created and unlinked once per slice. Elsewhere they stay
    /// files: an export's sort may be as large as the store. Together: a quarter to a half less CPU per
    /// visit and 40 % fewer bytes written (`bench/stages/sync`, bench/RESULTS.md).
    public func syncTokens() throws {
        guard let sqlite = database as? SQLiteConnection else { return }
        try sqlite.execute("PRAGMA synchronous=NORMAL")
        try sqlite.execute("PRAGMA wal_autocheckpoint=\(Self.syncCheckpointFrames)")
        try sqlite.execute("PRAGMA temp_store=MEMORY")
        let slices = Result { try syncSlices(sqlite) }
        // Back to FULL before anything else runs on this connection (a line item, a report in the outbox must
        // be on disk when its commit returns): a failure here is thrown, never left behind.
        try sqlite.execute("PRAGMA synchronous=FULL")
        try sqlite.execute("PRAGMA wal_autocheckpoint=1000")
        try sqlite.execute("PRAGMA temp_store=DEFAULT")
        try slices.get()
    }

    /// The most visits a sync's slice brings in, whatever the last took: a slice's commit writes every page
    /// it changed (about four per visit) to the WAL under the write lock, and while report_tokens is
    /// small a slice of 500 often took under a millisecond, so slices grew to that, and 20-45 ms when that
    /// write met the kernel's writeback, with every shopper's commit waiting (`bench/latency`,
    /// bench/RESULTS.md).
    static let syncSliceLargest: Int64 = 64

    /// The WAL's size in frames (4 KiB pages) from which a sync's commit checkpoints: 64 MiB.
    static let syncCheckpointFrames = 16_384

    /// `syncTokens`'s slices, each in a transaction of its own, with a pause after each while more wait.
    /// Stops at the newest visit committed when it began: under a load that commits visits faster than the
    /// slices bring them in, it would never end otherwise, and the dashboard's request waiting on it with it.
    /// Each slice is timed on this machine's monotonic clock, to pace the write lock (as the backfill is).
    private func syncSlices(_ sqlite: SQLiteConnection) throws {
        let through = try sqlite.integer("SELECT coalesce(max(id), 0) FROM visits")
        var size = Self.syncSliceLargest
        while true {
            let started = TimeSource.system.monotonicNanoseconds()
            let more = try sqlite.transaction { try syncChunk(sqlite, size: size, through: through) }
            let took = TimeSource.system.monotonicNanoseconds() - started
            if took > 2_000_000 { size = max(8, size / 2) } else if took < 1_000_000 { size = min(Self.syncSliceLargest, size * 2) }
            guard more else { return }
            usleep(UInt32(min(100_000, max(1_000, took / 1_000))))
        }
    }

    /// Brings up to `size` visits into reporting, none past visit `through` if given; true when more may be
    /// waiting (up to `through`).
    func syncChunk(_ connection: SQLiteConnection, size: Int64 = SQLReportingStore.syncChunk, through: Int64? = nil) throws -> Bool {
        let last = try connection.integer("SELECT last_visit_id FROM report_sync")
        let committed = try connection.integer("SELECT coalesce(max(id), 0) FROM visits")
        let newest = through.map { min($0, committed) } ?? committed
        guard newest > last else { return false }
        let upTo = min(newest, last + size)
        // The first visit gives the row; the first shopper's visit, which may come later, its experiment
        // (schema 7): the smallest visit id wins, so neither a later shopper's visit nor the order in which
        // the backfill reads older visits changes it. A token with line items whose first shopper changes
        // takes its purchases along (`PurchaseTally`).
        try PurchaseTally.aroundSQLiteChunk(connection, from: last, upTo: upTo) {
            try connection.query(
                """
                INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment,
                    token_creation_date, token_type, token_expiration_date, shopper_visit, shopper_seen, shopper_link,
                    experiment, variant, country)
                SELECT external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                    token_expiration_date, CASE WHEN kind = 'shopper' THEN id END, CASE WHEN kind = 'shopper' THEN first_seen END,
                    CASE WHEN kind = 'shopper' THEN link END, CASE WHEN kind = 'shopper' THEN experiment END,
                    CASE WHEN kind = 'shopper' THEN variant END, nullif(country, '')
                FROM visits WHERE id > ?1 AND id <= ?2 ORDER BY id
                ON CONFLICT (external_purchase_id) DO UPDATE SET
                    shopper_visit = CASE WHEN \(Self.firstShopper) THEN excluded.shopper_visit ELSE report_tokens.shopper_visit END,
                    shopper_seen = CASE WHEN \(Self.firstShopper) THEN excluded.shopper_seen ELSE report_tokens.shopper_seen END,
                    shopper_link = CASE WHEN \(Self.firstShopper) THEN excluded.shopper_link ELSE report_tokens.shopper_link END,
                    experiment = CASE WHEN \(Self.firstShopper) THEN excluded.experiment ELSE report_tokens.experiment END,
                    variant = CASE WHEN \(Self.firstShopper) THEN excluded.variant ELSE report_tokens.variant END,
                    country = coalesce(report_tokens.country, excluded.country)
                -- A token known before its first visit (from Apple's notification) takes that visit's country.
                WHERE \(Self.firstShopper) OR (report_tokens.country IS NULL AND excluded.country IS NOT NULL)
                """, [.integer(last), .integer(upTo)])
        }
        try connection.query("UPDATE report_sync SET last_visit_id = ?1", [.integer(upTo)])
        return upTo < newest
    }

    /// In the sync's upsert: the visit is the token's first shopper's (the smallest visit id of a shopper).
    private static let firstShopper =
        "(\(#"excluded.shopper_visit IS NOT NULL AND (report_tokens.shopper_visit IS NULL OR excluded.shopper_visit < report_tokens.shopper_visit)"#))"

    /// Reads the visits brought into reporting before schema 7 again for their tokens' first shoppers, a
    /// chunk of `syncChunk` visits per transaction, for about `budget` seconds; true when some are left.
    /// Never inserts a token: it only fills in rows already there.
    ///
    /// Each chunk holds the write lock, as a sync's does, and after each it waits as long as the chunk
    /// took: back to back, the gateway's writer (waiting in SQLite's busy handler, which sleeps 1 to 100
    /// ms between tries) could miss every gap and hold its shoppers' redirects for the whole budget.
    ///
    /// The budget and the pauses are this machine's elapsed time (the monotonic clock, as the sync's
    /// slices), not a clock handed in: they pace the write lock, and decide nothing a test would move.
    @discardableResult
    public func backfillFirstShoppers(budget: TimeInterval) throws -> Bool {
        guard let sqlite = database as? SQLiteConnection else { return false }
        let deadline = TimeSource.system.monotonicNanoseconds() + UInt64(budget * 1e9)
        while true {
            let started = TimeSource.system.monotonicNanoseconds()
            let more = try sqlite.transaction {
                let from = try sqlite.integer("SELECT shoppers_from FROM report_sync")
                let until = try sqlite.integer("SELECT shoppers_until FROM report_sync")
                guard from < until else { return false }
                let upTo = min(until, from + Self.syncChunk)
                try PurchaseTally.aroundSQLiteChunk(sqlite, from: from, upTo: upTo) {
                    try sqlite.query(
                        """
                        UPDATE report_tokens SET shopper_visit = first.id, shopper_seen = first.first_seen,
                            shopper_link = first.link, experiment = first.experiment, variant = first.variant
                        FROM (SELECT v.id, v.external_purchase_id, v.first_seen, v.link, v.experiment, v.variant
                              FROM (SELECT min(id) AS id FROM visits WHERE id > ?1 AND id <= ?2 AND kind = 'shopper'
                                    GROUP BY external_purchase_id) AS firsts
                              JOIN visits AS v ON v.id = firsts.id) AS first
                        WHERE report_tokens.external_purchase_id = first.external_purchase_id
                            AND (report_tokens.shopper_visit IS NULL OR first.id < report_tokens.shopper_visit)
                        """, [.integer(from), .integer(upTo)])
                }
                try sqlite.query("UPDATE report_sync SET shoppers_from = ?1", [.integer(upTo)])
                return upTo < until
            }
            if !more { return false }
            let now = TimeSource.system.monotonicNanoseconds()
            if now >= deadline { return true }
            Thread.sleep(forTimeInterval: max(0.005, Double(now - started) / 1e9))
        }
    }
}
