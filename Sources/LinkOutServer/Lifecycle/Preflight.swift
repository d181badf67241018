import CLibevent
import Foundation
import Glibc
import LinkOutCore
import LinkOutStore

/// Everything `serve` checks before it listens, in one place, so that `check-config` (which calls it too)
/// says OK exactly when `serve` would start as far as the config goes: the pages are there and readable,
/// the GeoIP database opens, the folders of the store, the spool and the access log exist or can be made,
/// the main, admin and API addresses differ and can be bound, and are not served by a linkout of another
/// store (`PortSharing`), the API keys file reads. (The config's own rules, the signing secret and
/// the CA file are checked when it is read, by the same code for both commands.) What it cannot know
/// beforehand is left to `serve`: whether PostgreSQL answers, or a port taken between the two.
package enum Preflight {
    /// What serving needs, ready.
    package struct Ready {
        /// The files the config names, read.
        package var files: ConfigFiles
        /// What the operator should know though nothing stops serving: an address shared with a linkout of
        /// the same store (a restart with no gap).
        package var notes: [String] = []
    }

    /// - Parameters:
    ///   - store: the store's location (a SQLite path, or a PostgreSQL URL, which is not contacted here).
    ///   - spoolPath: the outage spool, for a PostgreSQL store in spool mode.
    ///   - serving: `serve`'s check, which makes missing folders and refuses a spool another linkout holds;
    ///     false, `check-config`'s, which only checks the folders could be made and notes such a spool (its
    ///     holder may be the linkout whose config is checked).
    /// - Returns: the pages and GeoIP database, or one line per problem (`key: what is wrong`).
    package static func check(
        _ config: GatewayConfig, store: String, spoolPath: String?, serving: Bool
    ) -> Result<Ready, PreflightError> {
        var problems: [String] = []
        let files = ConfigFiles.read(config, problems: &problems)
        if case .file(let path) = config.accessLog.destination,
            let problem = fileProblem(path, creatingFolder: serving)
        {
            problems.append("accessLog.destination: \(problem)")
        }
        if case .sqlite(let path) = StoreLocation(store), let problem = fileProblem(path, creatingFolder: serving) {
            problems.append("store: \(problem)")
        }
        var notes: [String] = []
        if case .postgres = StoreLocation(store), config.storeOutage.mode == .spool, let spoolPath {
            if let problem = fileProblem(spoolPath, creatingFolder: serving) {
                problems.append("storeOutage.spoolPath: \(problem)")
            } else if SpoolingTokenStore.isInUse(spoolPath: spoolPath) {
                // Each instance replays its own spool; a restart with no gap runs two at once.
                let inUse =
                    "\(spoolPath) is in use by another linkout: give each instance a spool of its own, the new one of a restart with no gap too (--spool)"
                if serving {
                    problems.append("storeOutage.spoolPath: \(inUse)")
                } else {
                    notes.append("storeOutage.spoolPath: \(inUse); fine for a reload of that one (SIGHUP)")
                }
            }
        }
        let listen = config.server.listen
        /// The address bindable, and shared with no linkout of another store.
        func checkListener(_ key: String, _ address: ListenAddress) {
            if let problem = bindProblem(address) ?? PortSharing.problem(address, store: store) {
                problems.append("\(key): \(problem)")
            } else if let note = PortSharing.note(address, store: store) {
                notes.append("\(key): \(note)")
            }
        }
        checkListener("server.listen", listen)
        if let admin = config.server.adminListen {
            if sharesPort(admin, listen) {
                problems.append(
                    "server.adminListen: \(admin) is the main listener's address (\(listen)); give the admin listener a port of its own")
            } else {
                checkListener("server.adminListen", admin)
            }
        }
        if let api = config.api {
            let others = [("server.listen", listen)] + (config.server.adminListen.map { [("server.adminListen", $0)] } ?? [])
            if let (key, other) = others.first(where: { sharesPort(api.listen, $0.1) }) {
                problems.append("api.listen: \(api.listen) is \(key)'s address (\(other)); give the API listener a port of its own")
            } else {
                checkListener("api.listen", api.listen)
            }
        }
        // The dashboard and /metrics show traffic, destinations and ids: off loopback, only with keys.
        if let admin = config.server.adminListen, !isLoopback(admin.host), config.server.adminKeysFile == nil {
            problems.append(
                "server.adminListen: \(admin) is not a loopback address; set server.adminKeysFile so the dashboard and /metrics need a key (linkout api-key new NAME makes one), or listen on 127.0.0.1 and use an SSH tunnel"
            )
        }
        if !problems.isEmpty { return .failure(PreflightError(problems: problems)) }
        return .success(Ready(files: files, notes: notes))
    }

    /// What the shipped unit hands the service for a secret whose file is not in /etc/linkout: its
    /// `SetCredential=NAME:missing` fallback (systemd takes no empty value there), so that the service
    /// starts without the secrets its config does not name. Too short to pass for any secret.
    package static let missingCredential = "missing"

    /// The problem with a secret file the config names that holds nothing: empty, or the unit's stand-in
    /// for a missing file. Nil when it holds something (which its reader then checks).
    package static func nothingIn(_ path: String, _ data: Data) -> String? {
        if data.isEmpty { return "\(path) is empty" }
        guard data.elementsEqual(missingCredential.utf8) else { return nil }
        let name = (path as NSString).lastPathComponent
        return
            "\(path) is the systemd unit's stand-in for a missing file: put the file in /etc/linkout/\(name), which the unit loads (LoadCredential=), and restart"
    }

    /// Two listen addresses that would take the same connections (a port 0 never does: each gets its own).
    /// 127.0.0.0/8 and ::1: reachable from this machine only.
    static func isLoopback(_ host: String) -> Bool {
        host.hasPrefix("127.") || host == "::1" || host == "[::1]" || host == "0:0:0:0:0:0:0:1"
    }

    static func sharesPort(_ a: ListenAddress, _ b: ListenAddress) -> Bool {
        guard a.port != 0, a.port == b.port else { return false }
        let wildcard: Set<String> = ["0.0.0.0", "::"]
        return a.host == b.host || wildcard.contains(a.host) || wildcard.contains(b.host)
    }

    /// Why a file could not be opened for appending or created, or nil. With `creatingFolder`, a missing
    /// folder is made (as `serve` does); without, it must be creatable: its nearest existing ancestor a
    /// folder this process may write into.
    static func fileProblem(_ given: String, creatingFolder: Bool) -> String? {
        let manager = FileManager.default
        // Relative paths are the current folder's, as when the file is opened.
        let path = given.hasPrefix("/") ? given : (manager.currentDirectoryPath as NSString).appendingPathComponent(given)
        var isFolder: ObjCBool = false
        if manager.fileExists(atPath: path, isDirectory: &isFolder) {
            if isFolder.boolValue { return "\(path) is a folder" }
            return manager.isWritableFile(atPath: path) ? nil : "cannot write to \(path)"
        }
        let absolute = (path as NSString).deletingLastPathComponent
        if creatingFolder {
            do {
                try manager.createDirectory(atPath: absolute, withIntermediateDirectories: true)
            } catch {
                return "cannot create the folder \(absolute): \(error.localizedDescription)"
            }
        }
        var ancestor = absolute
        while !manager.fileExists(atPath: ancestor, isDirectory: &isFolder) {
            let parent = (ancestor as NSString).deletingLastPathComponent
            if parent == ancestor || parent.isEmpty { break }
            ancestor = parent
        }
        guard manager.fileExists(atPath: ancestor, isDirectory: &isFolder), isFolder.boolValue else {
            return "cannot create the folder \(absolute): \(ancestor) is not a folder"
        }
        guard access(ancestor, W_OK | X_OK) == 0 else {
            return ancestor == absolute
                ? "cannot create \(path): the folder \(absolute) is not writable"
                : "cannot create the folder \(absolute): \(ancestor) is not writable"
        }
        return nil
    }

    /// Why the address cannot be listened on, or nil. Bound with `SO_REUSEPORT`, as the listeners are, so
    /// a process sharing it the same way is no problem here (`PortSharing` decides whether it may be
    /// shared); anything else holding the port is.
    static func bindProblem(_ listen: ListenAddress) -> String? {
        guard let (address, length) = SocketAddress.make(listen) else { return "\(listen) is not a numeric address" }
        let family = Int32(address.ss_family)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return "cannot open a socket: \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = SocketAddress.withSockAddr(address) { bind(fd, $0, socklen_t(length)) == 0 }
        guard bound else {
            let reason = String(cString: strerror(errno))
            return errno == EADDRINUSE
                ? "cannot listen on \(listen): \(reason) (by a program that is not a linkout sharing it with SO_REUSEPORT)"
                : "cannot listen on \(listen): \(reason)"
        }
        return nil
    }
}

/// The problems `Preflight` found, one line each (`key: what is wrong`).
package struct PreflightError: Error, CustomStringConvertible {
    package var problems: [String]
    package var description: String { problems.joined(separator: "; ") }
}
