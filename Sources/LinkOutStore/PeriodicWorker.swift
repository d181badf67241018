import Foundation

/// A background thread that runs a round of work, then waits `interval` or until woken, until stopped:
/// the shape of the WAL checkpointer, the spool replayer and the reporter, written once so that start,
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
    private let finished = DispatchSemaphore(value: 0)

    private enum State { case idle, running, stopping, stopped }

    public init(name: String, interval: TimeInterval) {
        self.name = name
        self.interval = interval
    }

    /// Starts the thread. `round` returns true when it left work undone (run again at once), false to wait.
    public func start(_ round: @escaping @Sendable () -> Bool) {
        condition.withLock {
            precondition(state == .idle, "\(name) starts once")
            state = .running
        }
        let thread = Thread { [self] in
            while true {
                let again = round()
                condition.lock()
                if !again, !woken, state == .running { _ = condition.wait(until: Date(timeIntervalSinceNow: interval)) }
                woken = false
                let stop = state == .stopping
                condition.unlock()
                if stop { break }
            }
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Runs the next round now; a wake during a round makes another follow it at once.
    public func wake() {
        condition.withLock {
            woken = true
            condition.signal()
        }
    }

    /// Waits for the round in progress to end. Does nothing when never started or already stopped.
    public func stop() {
        let wait = condition.withLock {
            guard state == .running else { return false }
            state = .stopping
            condition.signal()
            return true
        }
        guard wait else { return }
        finished.wait()
        condition.withLock { state = .stopped }
    }
}
