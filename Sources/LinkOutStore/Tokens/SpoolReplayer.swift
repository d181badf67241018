import Foundation
import LinkOutCore

/// Moves an outage spool into PostgreSQL, on its own thread with its own connections (one to the spool
/// file, one to PostgreSQL), so the writer never waits for it.
///
/// Exactly once: each table of the spool is a stream named by an id kept in the spool file
/// (`linkout_spool`), whose rows are read in row id order, a batch at a time. A batch and the stream's mark
/// (the last row id applied, in PostgreSQL's `spool_replays`) are committed in one PostgreSQL transaction,
/// and rows at or below the mark are skipped; only then is the batch deleted from the spool. A crash
/// between the two commits leaves rows in the spool that the mark says were applied: the next replay
/// deletes them without counting them again. SQLite hands out row ids above the largest present, and the
/// spool is deleted from the lowest up, so ids only restart when a table is emptied: the stream then gets
/// a new id, in the same transaction as the delete.
final class SpoolReplayer: @unchecked Sendable {
    private let url: String
    private let timeoutMs: Int
    private let batchSize: Int
    private let connection: SQLiteConnection
    private var postgres: PostgresTokenStore?
    weak var owner: SpoolingTokenStore?

    private let worker = PeriodicWorker(name: "linkout-spool", interval: 1)
    /// The last failure reported, so an outage logs once rather than every second.
    private var reportedError: String?

    /// Tests: runs after a batch is committed to PostgreSQL and before it is deleted from the spool; a
    /// throw here is a crash between the two.
    var afterPostgresCommit: (() throws -> Void)?

    init(url: String, spoolPath: String, timeoutMs: Int, batchSize: Int) throws {
        self.url = url
        self.timeoutMs = timeoutMs
        self.batchSize = batchSize
        connection = try SQLiteConnection(path: spoolPath, readOnly: false)
        try connection.execute("PRAGMA synchronous=FULL")
    }

    func start() {
        worker.start { [self] in round() }
    }

    func wake() {
        worker.wake()
    }

    func stop() {
        worker.stop()
        postgres?.close()
    }

    /// One pass; true when it replayed something, so the next follows at once.
    private func round() -> Bool {
        var replayed = 0
        do {
            replayed = try replayPass()
            if replayed == 0, let owner, owner.wantsRecoveryCheck {
                // Nothing spooled: is PostgreSQL back? (the writer sends everything to the spool until then)
                try connectedPostgres().probe()
                // Anything spooled since the pass above is replayed by the next one.
                owner.leaveOutage()
            }
            reportedError = nil
        } catch {
            let text = String(describing: error)
            if text != reportedError {
                reportedError = text
                owner?.report(.warning, "spool replay waiting for PostgreSQL", ["error": text])
            }
        }
        return replayed > 0
    }

    private func connectedPostgres() throws -> PostgresTokenStore {
        if let postgres { return postgres }
        let store = try PostgresTokenStore(url: url, timeoutMs: timeoutMs)
        postgres = store
        return store
    }

    /// Replays at most one batch of each table; returns how many spooled visits it cleared (0: the spool
    /// is empty).
    func replayPass() throws -> Int {
        var cleared = 0
        for table in SQLiteTokenStore.spoolTables {
            cleared += try replayBatch(table)
        }
        return cleared
    }

    private func replayBatch(_ table: String) throws -> Int {
        let stream = try SQLiteTokenStore.spoolStream(table, in: connection)
        let rows = try SQLiteTokenStore.spooledVisits(table, limit: batchSize, in: connection)
        guard let last = rows.last?.rowid else { return 0 }
        let applied = try connectedPostgres().commitReplayed(stream: stream, rows: rows, lastRowid: last)
        try afterPostgresCommit?()
        try SQLiteTokenStore.clearSpooled(table, stream: stream, through: last, in: connection)
        owner?.replayed(rows.count)
        if applied < rows.count {
            owner?.report(
                .notice,
                "spooled visits already in PostgreSQL (replayed before a crash, or committed before their acknowledgement was lost); cleared without counting them again",
                ["stream": stream, "visits": "\(rows.count - applied)"])
        }
        return rows.count
    }
}

/// One row read back from the spool: its row id in its table, the visit, and the writer batch it was
/// spooled with.
struct SpooledVisit {
    var rowid: Int64
    var visit: VisitRecord
    var batch: BatchIdentity?
}
