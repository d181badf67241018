import Foundation

/// Copies the WAL back into the database file on its own thread and connection, so the writer's commits
/// never wait for a checkpoint. With SQLite's automatic checkpoint the commit that crosses the WAL's
/// threshold also writes and fsyncs the database file, which showed as 10-15 ms stalls in the benchmark's
/// tail latency. A PASSIVE checkpoint takes no lock that blocks the writer.
final class SQLiteCheckpointer: @unchecked Sendable {
    private let path: String
    private let interval: TimeInterval
    private let condition = NSCondition()
    private var stopping = false
    private let stopped = DispatchSemaphore(value: 0)

    init(path: String, interval: TimeInterval = 0.25) {
        self.path = path
        self.interval = interval
    }

    func start() throws {
        let connection = try SQLiteConnection(path: path, readOnly: false)
        try connection.execute("PRAGMA synchronous=FULL")
        let thread = Thread { [self] in
            run(connection)
            stopped.signal()
        }
        thread.name = "linkout-checkpoint"
        thread.start()
    }

    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        stopped.wait()
    }

    private func run(_ connection: SQLiteConnection) {
        while true {
            condition.lock()
            if !stopping { _ = condition.wait(until: Date(timeIntervalSinceNow: interval)) }
            let done = stopping
            condition.unlock()
            if done { return }
            // A failure here loses nothing (the WAL keeps every commit); the next round tries again.
            try? connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
        }
    }
}
