import CSQLite
import Foundation

/// Copies the WAL back into the database file on its own thread and connection, so the writer's commits
/// never wait for a bulk checkpoint, and keeps the WAL from growing while the writer never stops.
///
/// Why a thread of its own: with SQLite's automatic checkpoint the commit that crosses the WAL's threshold
/// also writes and fsyncs the database file, which showed as 10-15 ms stalls in the benchmark's tail
/// latency. A PASSIVE checkpoint takes no lock that blocks the writer.
///
/// Why the writer still takes a small part: SQLite starts the WAL over from its first frame only when a
/// write transaction begins and every frame is already in the database. A PASSIVE checkpoint copies the
/// frames committed before it started; under steady load the writer has committed more by the time it
/// ends, so that moment never came and the WAL grew by the whole write rate (30 MB/s, 228 MB after 10 s in
/// `bench/run`'s strict row). Every commit then appended to new blocks, and each fsync also had to write
/// the file's inode (size and block map): two disk writes per commit instead of one. So when a round ends
/// with a WAL of at least `catchUpFrames`, it asks the writer to copy the frames committed meanwhile itself,
/// between two of its batches (`catchUpIfDue`), when nothing else can commit: the next batch then starts
/// the WAL over and overwrites blocks the file already has. The catch-up copies a round's worth of commits
/// at most and fsyncs the database file, on the writer's thread: a stall of a few milliseconds every
/// round under load, against a WAL that would otherwise grow without end (bench/RESULTS.md measures both).
final class SQLiteCheckpointer: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let worker: PeriodicWorker
    private let catchUpFrames: Int32
    private let catchUpDue = Locked(false)

    /// - Parameter catchUpFrames: the WAL size, in frames (pages), from which the writer is asked to catch
    ///   up: below it the WAL starts over by itself when the load pauses for a moment. SQLite's own automatic
    ///   checkpoint threshold is 1,000.
    init(path: String, interval: TimeInterval = 0.25, catchUpFrames: Int32 = 1000) throws {
        connection = try SQLiteConnection(path: path, readOnly: false)
        try connection.execute("PRAGMA synchronous=FULL")
        self.catchUpFrames = catchUpFrames
        worker = PeriodicWorker(name: "linkout-wal", interval: interval)
    }

    /// Runs `checkpoint` every interval on the checkpointer's thread.
    func start() {
        worker.start { [self] in
            checkpoint()
            return false
        }
    }

    /// One round, on the checkpointer's connection: copies what is committed (PASSIVE: it waits for no
    /// one), and asks the writer to catch up if the WAL was big enough to be worth starting over. A failure
    /// loses nothing (the WAL keeps every commit); the next round tries again.
    func checkpoint() {
        var logFrames: Int32 = 0
        let status = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, nil)
        if status == SQLITE_OK, logFrames >= catchUpFrames { catchUpDue.withLock { $0 = true } }
    }

    /// On the writer's thread and connection, outside any transaction: if the last round asked for it,
    /// copies what was committed since that round began (PASSIVE: it waits for no one; a reader still on old
    /// frames only defers the WAL's restart to a later round).
    func catchUpIfDue(on writer: SQLiteConnection) {
        guard
            catchUpDue.withLock({ due in
                defer { due = false }
                return due
            })
        else { return }
        _ = sqlite3_wal_checkpoint_v2(writer.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }

    func stop() {
        worker.stop()
    }
}
