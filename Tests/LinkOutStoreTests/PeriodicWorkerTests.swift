import Foundation
import LinkOutStore
import Testing

@Suite struct PeriodicWorkerTests {
    /// Counts rounds; the round can be held open so a wake can arrive while it runs.
    final class Rounds: @unchecked Sendable {
        let lock = NSCondition()
        var count = 0
        var hold = false
        func run() -> Bool {
            lock.withLock {
                count += 1
                lock.broadcast()
                while hold { lock.wait() }
            }
            return false
        }
        func waitFor(_ rounds: Int) -> Bool {
            lock.withLock {
                let deadline = Date().addingTimeInterval(10)
                while count < rounds { if !lock.wait(until: deadline) { return count >= rounds } }
                return true
            }
        }
    }

    @Test("the first round runs at start, the next only when woken (the interval is an hour)")
    func wakeRunsARound() {
        let rounds = Rounds()
        let worker = PeriodicWorker(name: "test-worker", interval: 3600)
        worker.start { rounds.run() }
        #expect(rounds.waitFor(1))
        worker.wake()
        #expect(rounds.waitFor(2))
        worker.stop()
        #expect(rounds.lock.withLock { rounds.count } == 2)
    }

    @Test("a wake during a round is not lost: another round follows at once")
    func wakeDuringARound() {
        let rounds = Rounds()
        rounds.hold = true
        let worker = PeriodicWorker(name: "test-worker", interval: 3600)
        worker.start { rounds.run() }
        #expect(rounds.waitFor(1))
        worker.wake()
        rounds.lock.withLock {
            rounds.hold = false
            rounds.lock.broadcast()
        }
        #expect(rounds.waitFor(2))
        worker.stop()
    }

    @Test("stop waits for the round in progress and is safe twice or before start")
    func stopWaits() {
        PeriodicWorker(name: "never-started", interval: 1).stop()
        let rounds = Rounds()
        rounds.hold = true
        let worker = PeriodicWorker(name: "test-worker", interval: 3600)
        worker.start { rounds.run() }
        #expect(rounds.waitFor(1))
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            worker.stop()
            stopped.signal()
        }.start()
        #expect(stopped.wait(timeout: .now() + 0.3) == .timedOut, "stop returned while a round ran")
        rounds.lock.withLock {
            rounds.hold = false
            rounds.lock.broadcast()
        }
        #expect(stopped.wait(timeout: .now() + 10) == .success)
        worker.stop()
        #expect(rounds.lock.withLock { rounds.count } == 1)
    }

    @Test("a second stop while the first waits also waits for the round")
    func secondStopWaits() {
        let rounds = Rounds()
        rounds.hold = true
        let worker = PeriodicWorker(name: "test-worker", interval: 3600)
        worker.start { rounds.run() }
        #expect(rounds.waitFor(1))
        let first = DispatchSemaphore(value: 0), second = DispatchSemaphore(value: 0)
        Thread {
            worker.stop()
            first.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.1)  // the first stop is in; if not, the second is the first
        Thread {
            worker.stop()
            second.signal()
        }.start()
        #expect(second.wait(timeout: .now() + 0.3) == .timedOut, "a second stop returned while a round ran")
        rounds.lock.withLock {
            rounds.hold = false
            rounds.lock.broadcast()
        }
        #expect(first.wait(timeout: .now() + 10) == .success)
        #expect(second.wait(timeout: .now() + 10) == .success)
    }
}
