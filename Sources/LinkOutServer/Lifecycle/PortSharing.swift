import CLibevent
// `stat` is declared by whichever C module the compiler loads first that includes <sys/stat.h>; with
// MemberImportVisibility its members need that module imported here. Which module it is depends on the
// build (a release build of 8af76d5 failed here with CoreFoundation, as did debug builds after LinkOutCore
// changed): importing it makes every build agree.
import CoreFoundation
import Foundation
import Glibc
import LinkOutCore
import Synchronization

/// Who else serves a listen address. The listeners bind with `SO_REUSEPORT` so that a new process can
/// start beside the old one for a restart with no gap; the kernel then splits new connections between
/// them. That is right only when both serve the same store: two stores on one port split the shoppers'
/// records (and the dashboard's answers) between them, silently. So a linkout refuses an address another
/// process already serves unless that process is a linkout serving the same store.
///
/// How a linkout says what it serves: each serving process binds, for each of its listeners, an abstract
/// Unix socket (no file; closed as that listener closes, and the kernel drops it when the process ends,
/// however it ends) named `linkout-serves/HOST:PORT/STORE/PID`, where STORE is a hash of the store's
/// identity. Every process of the network namespace can read those names in `/proc/net/unix`, whatever
/// user it runs as, which is the same scope as the TCP ports themselves.
package enum PortSharing {
    static let prefix = "linkout-serves/"

    /// A linkout serving an address, read from its beacon.
    package struct Server: Equatable, Sendable {
        package var address: ListenAddress
        package var store: String
        package var pid: Int32
    }

    /// A stable tag of the store's identity: the same for every process that opens the same store. A
    /// SQLite file is its device and inode (whatever path names it); a PostgreSQL store its URL without the
    /// password, either spelling of its scheme. A SQLite file that does not exist yet is its absolute path:
    /// no one can be serving it.
    package static func storeTag(_ store: String) -> String {
        let identity: String
        switch StoreLocation(store) {
        case .postgres(let url):
            // `postgresql://` and `postgres://` are one scheme (libpq takes both, `isPostgresURL` says how
            // they are spelt): either way, one store.
            let redacted = StoreLocation.redactingPassword(url)
            identity =
                "postgres " + (redacted.hasPrefix("postgresql://") ? "postgres://" + redacted.dropFirst("postgresql://".count) : redacted)
        case .sqlite(let path):
            // Foundation's attributes rather than `stat`, whose struct a clean build may find in another module.
            if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                let device = attributes[.systemNumber], let inode = attributes[.systemFileNumber]
            {
                identity = "sqlite \(device) \(inode)"
            } else {
                let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
                identity = "sqlite-new " + absolute
            }
        }
        let hash = StableHash.mix(StableHash.fnv1a(Array(identity.utf8)))
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The beacons this process holds, by the address they name: each open until its listener closes
    /// (`withdraw`), or the process ends.
    private static let beacons = Mutex<[String: Int32]>([:])

    /// Announces that this process serves `store` on `addresses` (their real ports). Idempotent per address.
    package static func announce(_ addresses: [ListenAddress], store: String) {
        let tag = storeTag(store)
        for address in addresses where beacons.withLock({ $0["\(address)"] }) == nil {
            let name = "\(prefix)\(address)/\(tag)/\(getpid())"
            let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            var unixAddress = sockaddr_un()
            unixAddress.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(name.utf8.prefix(MemoryLayout.size(ofValue: unixAddress.sun_path) - 1))
            // Abstract: the name starts after a NUL byte in sun_path.
            withUnsafeMutableBytes(of: &unixAddress.sun_path) { path in
                path[0] = 0
                for (index, byte) in bytes.enumerated() { path[index + 1] = byte }
            }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + bytes.count)
            let bound = withUnsafePointer(to: &unixAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 }
            }
            if bound { beacons.withLock { $0["\(address)"] = fd } } else { close(fd) }
        }
    }

    /// Once every listener is bound and started: says where this process serves, so a linkout started
    /// after it sees what it would share. Two started at the same moment with different stores both passed
    /// the pre-flight: each looks again, and one that finds the other calls `stop` and throws its problem
    /// (both may: neither then splits the shoppers). Only the ports the config named (`asked`) are looked at
    /// again: a port the kernel chose (0 asked for) is shared with no listener.
    static func claim(_ listening: Listening, asked: [ListenAddress], store: String, stop: () -> Void) throws {
        announce(listening.all, store: store)
        for address in listening.all where asked.contains(where: { Preflight.sharesPort($0, address) }) {
            // Only another store's beacon counts now: this process's own socket listens there too.
            guard case .otherStore = verdict(address, store: store), let problem = problem(address, store: store) else { continue }
            stop()
            throw ServerError(problem)
        }
    }

    /// Says this process no longer serves `address`: called as its listener closes. A beacon outliving
    /// its listener (through the drain of a stop, which may take seconds) would make the kernel's next
    /// pick of that port for another linkout look taken by a store it no longer serves.
    package static func withdraw(_ address: ListenAddress) {
        guard let fd = beacons.withLock({ $0.removeValue(forKey: "\(address)") }) else { return }
        close(fd)
    }

    /// Every linkout serving now, but this process, from the beacons in `/proc/net/unix`.
    package static func servers() -> [Server] {
        // Read to the end by hand: a /proc file says its size is 0, which Foundation's readers believe.
        let fd = open("/proc/net/unix", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        let table = String(decoding: bytes, as: UTF8.self)
        let me = getpid()
        var found: [Server] = []
        for line in table.split(separator: "\n") {
            // The path is the last field; an abstract name is shown with '@' for its leading NUL.
            guard let name = line.split(separator: " ").last, name.hasPrefix("@" + prefix) else { continue }
            let parts = name.dropFirst(1 + prefix.count).split(separator: "/")
            guard parts.count == 3, let address = ListenAddress.parse(String(parts[0])), let pid = Int32(parts[2]), pid != me else {
                continue
            }
            found.append(Server(address: address, store: String(parts[1]), pid: pid))
        }
        return found
    }

    /// Whether a socket listens on the address now: a bind without `SO_REUSEPORT` fails while one does
    /// (`SO_REUSEADDR` keeps connections in TIME_WAIT from counting).
    static func isListenedOn(_ listen: ListenAddress) -> Bool {
        guard let (address, length) = SocketAddress.make(listen) else { return false }
        let fd = socket(Int32(address.ss_family), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = SocketAddress.withSockAddr(address) { bind(fd, $0, socklen_t(length)) == 0 }
        return !bound && errno == EADDRINUSE
    }

    /// What serving `store` on `listen` would share it with.
    package enum Verdict: Equatable {
        /// No one listens there.
        case free
        /// Linkouts serving the same store listen there: a restart with no gap.
        case sameStore(pids: [Int32])
        /// A linkout serving another store listens there.
        case otherStore(pid: Int32)
        /// Something listens there with `SO_REUSEPORT` and says nothing of a store: another program of
        /// this user, or a linkout older than these beacons.
        case unknown
    }

    /// Decides after the address was found bindable with `SO_REUSEPORT` (a program holding it without
    /// that is the bind's own error). A port 0 is never shared.
    package static func verdict(_ listen: ListenAddress, store: String) -> Verdict {
        guard listen.port != 0 else { return .free }
        let sharing = servers().filter { Preflight.sharesPort($0.address, listen) }
        if let other = sharing.first(where: { $0.store != storeTag(store) }) { return .otherStore(pid: other.pid) }
        if !sharing.isEmpty { return .sameStore(pids: sharing.map(\.pid).sorted()) }
        return isListenedOn(listen) ? .unknown : .free
    }

    /// Why `store` may not be served on `listen`, or nil.
    package static func problem(_ listen: ListenAddress, store: String) -> String? {
        switch verdict(listen, store: store) {
        case .free, .sameStore: nil
        case .otherStore(let pid):
            "\(listen) is already served by another linkout (pid \(pid)) with a different store; stop it first, or choose another address. Two stores on one port would split the shoppers between them: only a linkout of the same store may share it, for a restart with no gap"
        case .unknown:
            "\(listen) is already served by another process that shares it with SO_REUSEPORT and says no store (another program, or an older linkout that cannot say which store it serves); stop it first, or choose another address"
        }
    }

    /// A line for the operator when `listen` is shared with linkouts of the same store, or nil.
    package static func note(_ listen: ListenAddress, store: String) -> String? {
        guard case .sameStore(let pids) = verdict(listen, store: store) else { return nil }
        let who = pids.map(String.init).joined(separator: ", ")
        return
            "\(listen) is also served by linkout (pid \(who)) with the same store: a restart with no gap; SIGTERM the old one once this one is up"
    }
}
