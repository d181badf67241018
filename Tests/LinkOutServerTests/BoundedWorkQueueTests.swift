import Foundation
import LinkOutCore
import Testing

@testable import LinkOutServer

/// The loops' hand-off to a thread of its own: bounded, in order, drained on stop.
@Suite struct BoundedWorkQueueTests {
    final class Journal: @unchecked Sendable {
        private let lock = NSLock()
        private var _done: [Int] = []
        private var _sweeps = 0
        var done: [Int] { lock.withLock { _done } }
        var sweeps: Int { lock.withLock { _sweeps } }
        func did(_ job: Int) { lock.withLock { _done.append(job) } }
        func swept() { lock.withLock { _sweeps += 1 } }
    }

    @Test func takesAtMostMaxQueuedAndDoesWhatIsQueuedBeforeStopping() {
        let queue = BoundedWorkQueue<Int>(name: "test-queue", maxQueued: 3)
        let journal = Journal()
        #expect((1...4).map { queue.submit($0) } == [true, true, true, false])
        queue.start { journal.did($0) }
        queue.stop()
        #expect(journal.done == [1, 2, 3])
        #expect(!queue.submit(5), "nothing new once stopping")
    }

    @Test func sweepsFirstAndThenWhenIdle() throws {
        let queue = BoundedWorkQueue<Int>(name: "test-sweep", maxQueued: 8)
        let journal = Journal()
        queue.start(sweepingEvery: 0.05, clock: .system, sweep: { journal.swept() }) { journal.did($0) }
        #expect(queue.submit(1))
        let deadline = Date(timeIntervalSinceNow: 10)
        while journal.sweeps < 3 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        queue.stop()
        #expect(journal.sweeps >= 3)
        #expect(journal.done == [1])
    }
}
