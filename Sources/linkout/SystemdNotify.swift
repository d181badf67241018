import Foundation
import Glibc

/// systemd's readiness protocol (`Type=notify`, sd_notify(3)): one datagram, such as `READY=1`, to the
/// AF_UNIX socket named by `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). With it,
/// `systemctl start linkout` returns once linkout listens, and fails when it exits first (a config it
/// refuses, a port taken), instead of returning as soon as the process was forked. Without the variable
/// (not started by systemd) it does nothing.
enum SystemdNotify {
    /// Sends `state`; false when there is no socket to send to or the send failed (serving goes on either
    /// way: systemd then gives up on the start after its timeout and says so in the journal).
    @discardableResult
    static func send(_ state: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let name = environment["NOTIFY_SOCKET"], name.hasPrefix("/") || name.hasPrefix("@") else { return false }
        var path = Array(name.utf8)
        // An abstract address starts with a NUL and is exactly as long as given; a path ends with one.
        if path[0] == UInt8(ascii: "@") { path[0] = 0 } else { path.append(0) }
        var address = sockaddr_un()
        guard path.count <= MemoryLayout.size(ofValue: address.sun_path) else { return false }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout.offset(of: \sockaddr_un.sun_path)! + path.count)

        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, message, message.count, Int32(MSG_NOSIGNAL), $0, length)
            }
        }
        return sent == message.count
    }
}
