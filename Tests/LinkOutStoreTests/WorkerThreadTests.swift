import Foundation
import LinkOutStore
import Testing

/// The thread and lock helpers every background thread is built on, tested without sleeps: each wait is
/// for an event the test itself causes.
@Suite struct WorkerThreadTests {
    @Test("join returns only once the body has, and a second join returns at once")
    func joinWaitsForTheBody() {
        let gate = DispatchSemaphore(value: 0)
        let progress = Locked<[String]>([])
        let thread = WorkerThread(name: "linkout-test")
        thread.start {
            gate.wait()
            progress.withLock { $0.append("body ended") }
        }
        progress.withLock { $0.append("started") }
        gate.signal()
        thread.join()
        progress.withLock { $0.append("joined") }
        thread.join()
        #expect(progress.withLock { $0 } == ["started", "body ended", "joined"])
    }

    @Test("a join before start, or without one, has nothing to wait for")
    func joinWithoutStart() {
        WorkerThread(name: "linkout-idle").join()
    }

    @Test("the kernel knows the thread by its name, so top -H and ps -L show it")
    func named() {
        let name = Locked<String?>(nil)
        let thread = WorkerThread(name: "linkout-named")
        thread.start {
            let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            name.withLock { $0 = comm }
        }
        thread.join()
        #expect(name.withLock { $0 } == "linkout-named\n")
    }

    @Test("updates from many threads are none of them lost")
    func lockedCountsEveryUpdate() {
        let total = Locked(0)
        let threads = (0..<8).map { index in
            let thread = WorkerThread(name: "linkout-cnt-\(index)")
            thread.start {
                for _ in 0..<10_000 { total.withLock { $0 += 1 } }
            }
            return thread
        }
        for thread in threads { thread.join() }
        #expect(total.withLock { $0 } == 80_000)
    }
}
