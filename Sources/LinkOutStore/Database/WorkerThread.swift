import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A named thread running one body, whose end can be waited for. Every linkout thread starts and is
/// joined through it (the event loops, the admin and API listeners, the writer, the notification intake,
/// the health checker and the periodic workers), so each says what its thread does, not how a thread is
/// started, named and waited for.
///
/// The handle exists before the thread does, so its owner can keep it in a `let`: a `stop()` on another
/// thread never reads a handle still being assigned, and one that comes before `start` (or without it)
/// has nothing to wait for. A semaphore for the join, because Foundation's `Thread` has none.
package final class WorkerThread: @unchecked Sendable {
    /// The longest thread name Linux keeps (16 bytes with the terminating NUL); it cuts longer ones.
    package static let maxNameBytes = 15

    private let name: String
    private let started = Locked(false)
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameter name: as `top -H`, `ps -L` and `gdb` show the thread; at most `maxNameBytes`.
    package init(name: String) {
        self.name = name
    }

    /// Starts `body` on a new thread. Once only.
    package func start(_ body: @escaping @Sendable () -> Void) {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        precondition(first, "thread \(name) starts once")
        let thread = Thread { [name, finished] in
            Self.nameCurrentThread(name)
            body()
            finished.signal()
        }
        thread.start()
    }

    /// Waits until the body has returned; at once if the thread was never started, or was joined before.
    package func join() {
        guard started.withLock({ $0 }) else { return }
        finished.wait()
        // Passed on, so that a second join (a second stop()) does not wait for ever.
        finished.signal()
    }

    /// Measured with Swift 6.3.1's Foundation on Linux: a `Thread.name` set before `start()` never reached
    /// the kernel (`/proc/<pid>/task/*/comm` showed the process's name for every thread), and Glibc's
    /// module does not export `pthread_setname_np`. So the thread writes its own name where the kernel
    /// keeps it. A failure leaves the old name, nothing else.
    private static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = Array(name.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
