import Foundation

/// A background thread that runs a round of work, then waits `interval` or until woken, until stopped:
/// the shape of the WAL checkpointer, the spool replayer, the reporter and the access log, written once so that start,
/// wake and stop (and a wake during a round, which must not be lost) behave the same in each.
///
/// An `NSCondition` rather than Synchronization's `Mutex`: ThreadSanitizer, which `make test-tsan` runs,
/// sees pthread locks and not `Mutex`'s futex.
public final class PeriodicWorker: @unchecked Sendable {
    private let name: String
    private let interval: TimeInterval
    private let condition = NSCondition()
    private var state = State.idle
    private var woken = false
    private let thread: WorkerThread

    private enum State { case idle, running, stopping, stopped }

    public init(name: String, interval: TimeInterval) {
        self.name = name
        self.interval = interval
        thread = WorkerThread(name: name)
    }

    /// Starts the thread. `round` returns true when it left work undone (run again at once), false to wait.
    public func start(_ round: @escaping @Sendable () -> Bool) {
        condition.withLock {
            precondition(state == .idle, "\(name) starts once")
            state = .running
        }
        thread.start { [self] in
            while true {
                let again = round()
                condition.lock()
                if !again, !woken, state == .running { condition.wait(milliseconds: Int64(interval * 1000)) }
                woken = false
                let stop = state == .stopping
                condition.unlock()
                if stop { break }
            }
        }
    }

    /// Runs the next round now; a wake during a round makes another follow it at once.
    public func wake() {
        condition.withLock {
            woken = true
            // broadcast: a second stop() may be waiting on the same condition and must not take the signal.
            condition.broadcast()
        }
    }

    /// Waits for the round in progress to end, whoever else is stopping it too. Does nothing when never
    /// started or already stopped.
    public func stop() {
        condition.lock()
        switch state {
        case .idle, .stopped:
            condition.unlock()
        case .stopping:
            while state != .stopped { condition.wait() }
            condition.unlock()
        case .running:
            state = .stopping
            condition.broadcast()
            condition.unlock()
            thread.join()
            condition.withLock {
                state = .stopped
                condition.broadcast()
            }
        }
    }
}
