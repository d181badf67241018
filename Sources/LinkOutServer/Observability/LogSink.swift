import Foundation
import LinkOutStore

#if canImport(Glibc)
import Glibc
#endif

/// Where log lines go: a file descriptor, with a buffer so a batch of lines costs one write.
///
/// Appending takes a short lock; writing takes another, held for the whole write, so lines from two
/// flushes never interleave. A sink on a file can be reopened (SIGHUP), so log rotation by renaming works.
package final class LogSink: @unchecked Sendable {
    private let buffer = Locked<[UInt8]>([])
    /// The descriptor, locked for the whole of each write.
    private let output: Locked<Int32>
    private let path: String?
    private let autoFlush: Bool

    package init(fd: Int32, autoFlush: Bool) {
        output = Locked(fd)
        self.path = nil
        self.autoFlush = autoFlush
    }

    private init(fd: Int32, path: String, autoFlush: Bool) {
        output = Locked(fd)
        self.path = path
        self.autoFlush = autoFlush
    }

    /// Appends to the file at `path` (created if missing).
    package static func file(_ path: String, autoFlush: Bool) throws -> LogSink {
        LogSink(fd: try open(path), path: path, autoFlush: autoFlush)
    }

    private static func open(_ path: String) throws -> Int32 {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw ServerError("cannot open log file \(path): \(String(cString: strerror(errno)))") }
        return fd
    }

    /// For a file sink, opens the path again (after logrotate renamed the old file); others are unchanged.
    package func reopen() throws {
        guard let path else { return }
        let fresh = try Self.open(path)
        flush()
        let old = output.withLock { fd in
            let old = fd
            fd = fresh
            return old
        }
        close(old)
    }

    func append(_ line: String) {
        buffer.withLock { $0.append(contentsOf: line.utf8) }
        if autoFlush { flush() }
    }

    func append(bytes: [UInt8]) {
        buffer.withLock { $0.append(contentsOf: bytes) }
        if autoFlush { flush() }
    }

    package func flush() {
        output.withLock { fd in
            let pending = buffer.withLock { buffer in
                let pending = buffer
                buffer.removeAll(keepingCapacity: true)
                return pending
            }
            var offset = 0
            while offset < pending.count {
                let written = pending[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if written <= 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
