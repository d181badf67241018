import Foundation
import LinkOutCore
import LinkOutStore

/// Jobs handed from the loops to one thread of their own, at most `maxQueued` waiting: the notification
/// intake's, the payment providers' and the API's store work. A loop never waits on it: `submit` says at
/// once whether the job was taken, and a loop that hears no answers 503 itself. On `stop`, what is queued
/// is still done (each job's answer is owed to a loop), then the thread ends.
final class BoundedWorkQueue<Job>: @unchecked Sendable {
    private let maxQueued: Int
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopping = false
    private let thread: WorkerThread

    /// - Parameter name: the thread's, as `top -H` shows it.
    init(name: String, maxQueued: Int) {
        self.maxQueued = maxQueued
        thread = WorkerThread(name: name)
    }

    /// From any thread: false when `maxQueued` jobs wait already, or when stopping.
    func submit(_ job: Job) -> Bool {
        condition.withLock {
            guard !stopping, queue.count < maxQueued else { return false }
            queue.append(job)
            condition.signal()
            return true
        }
    }

    /// Starts the thread: `handle` for each job, in order, until stopped and drained.
    func start(_ handle: @escaping @Sendable (Job) -> Void) {
        thread.start { [self] in
            while case .job(let job) = next(until: nil) { handle(job) }
        }
    }

    /// Starts the thread with a chore besides the jobs: `sweep` once first, then whenever `every` seconds
    /// have passed since the last on `clock`'s monotonic side and no job is waiting (jobs go first; a busy
    /// queue delays it).
    func start(
        sweepingEvery every: TimeInterval, clock: TimeSource, sweep: @escaping @Sendable () -> Void,
        _ handle: @escaping @Sendable (Job) -> Void
    ) {
        let everyMs = Int64(every * 1000)
        thread.start { [self] in
            sweep()
            var nextSweep = clock.monotonicMilliseconds() + everyMs
            while true {
                switch next(until: (nextSweep, clock)) {
                case .job(let job): handle(job)
                case .sweep:
                    sweep()
                    nextSweep = clock.monotonicMilliseconds() + everyMs
                case .stop: return
                }
            }
        }
    }

    /// After everything that submits has stopped (the loops wait for the answers they are owed): takes
    /// nothing new, does what is queued, and returns once the thread has ended.
    func stop() {
        condition.withLock {
            stopping = true
            condition.signal()
        }
        thread.join()
    }

    private enum Work {
        case job(Job)
        case sweep, stop
    }

    /// The next job; `.sweep` when `deadline` (monotonic ms on its clock) passes with none waiting;
    /// `.stop` once stopping and drained.
    private func next(until deadline: (ms: Int64, clock: TimeSource)?) -> Work {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping {
            if let deadline {
                let left = deadline.ms - deadline.clock.monotonicMilliseconds()
                if left <= 0 { return .sweep }
                condition.wait(milliseconds: left)
            } else {
                condition.wait()
            }
        }
        return queue.isEmpty ? .stop : .job(queue.removeFirst())
    }
}
