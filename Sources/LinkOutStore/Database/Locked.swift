import Foundation

/// A value shared between threads, reachable only inside `withLock`: a lock can't be taken and not
/// released on some path, nor the value touched without it. Where a thread must also wait for the value
/// to change, an `NSCondition` stays (the writer's and the notification intake's queues, `PeriodicWorker`).
///
/// Here and not in LinkOutCore, which runs no threads; LinkOutStore is the lowest module that does (the
/// writer, the checkpointer), and the server builds on it. The same for `WorkerThread`.
///
/// An `NSLock` rather than Synchronization's `Mutex`: ThreadSanitizer, which `make test-tsan` runs, sees
/// pthread locks and not `Mutex`'s futex.
package final class Locked<Value>: @unchecked Sendable {
    // Inlinable, so that the closure is inlined at each use in the other modules as a hand-paired
    // lock()/unlock() would be.
    @usableFromInline let lock = NSLock()
    @usableFromInline var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    @inlinable
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
