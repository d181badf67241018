import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A named thread running one body, whose end can be waited for. Every linkout thread starts and is
/// joined through it (the event loops, the admin and API listeners, the writer, the notification intake,
/// the health checker and the periodic workers), so each says what its thread does, not how a thread is
/// started, named and waited for.
///
/// A semaphore, because Foundation's `Thread` has no join.
package final class WorkerThread: @unchecked Sendable {
    private let finished = DispatchSemaphore(value: 0)

    /// The longest thread name Linux keeps (16 bytes with the terminating NUL).
    package static let maxNameBytes = 15

    /// Starts `body` at once on a new thread called `name`, as `top -H`, `ps -L` and `gdb` show it (at most
    /// `maxNameBytes`; longer names are cut).
    package init(name: String, _ body: @escaping @Sendable () -> Void) {
        assert(name.utf8.count <= Self.maxNameBytes, "thread name '\(name)' is longer than Linux keeps")
        let kernelName = String(decoding: name.utf8.prefix(Self.maxNameBytes), as: UTF8.self)
        let thread = Thread { [finished] in
            Self.nameCurrentThread(kernelName)
            body()
            finished.signal()
        }
        thread.start()
    }

    /// On Linux, Foundation's `Thread.name` set before `start()` never reaches the kernel (every thread
    /// showed as the process), and Glibc's module does not export `pthread_setname_np`: the thread writes
    /// its own name where the kernel keeps it. A failure leaves the old name, nothing else.
    private static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = Array(name.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Waits until the body has returned; at once if it already has and was joined before.
    package func join() {
        finished.wait()
        // Passed on, so that a second join (a second stop()) does not wait for ever.
        finished.signal()
    }
}
