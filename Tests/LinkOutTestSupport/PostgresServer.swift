import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL server for tests: the Debian `postgresql` package's binaries, a fresh `initdb`
/// in a temporary folder, listening on a free loopback port. It never touches the machine's own clusters
/// (none needs to exist or run). One server per test process, started on first use; each test takes a
/// database of its own with `createDatabase()`. The server is stopped and its folder removed when the test
/// process exits, and by a watchdog if the test process dies without exiting.
///
/// In LinkOutTestSupport, used by the store tests and the integration tests alike.
package final class PostgresServer: @unchecked Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package let port: Int
    package let folder: String
    private let binaries: String
    /// How to run a server binary: directly, or as the `postgres` user when the tests run as root
    /// (PostgreSQL refuses to run as root).
    private let asServerUser: [String]

    private static let lock = NSLock()
    nonisolated(unsafe) private static var started: Result<PostgresServer, Failure>?

    /// The process's server, started on first use. Throws (with what to install) when PostgreSQL is missing:
    /// tests that need it must fail, not skip.
    package static func shared() throws -> PostgresServer {
        lock.lock()
        defer { lock.unlock() }
        if started == nil {
            do {
                started = .success(try PostgresServer())
                atexit { PostgresServer.stopShared() }
            } catch let error as Failure {
                started = .failure(error)
            } catch {
                started = .failure(Failure(description: "\(error)"))
            }
        }
        return try started!.get()
    }

    private static func stopShared() {
        if case .success(let server)? = started { server.stop() }
    }

    /// A new, empty database on the shared server: its URL, `postgres://linkout@127.0.0.1:PORT/NAME`.
    package static func createDatabase() throws -> String {
        try shared().createDatabase()
    }

    private init() throws {
        let installs = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .filter { FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/initdb") }
            .sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }
        guard let version = installs.last else {
            throw Failure(
                description: """
                    PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/initdb. The PostgreSQL tests start their \
                    own server from the Debian package: apt-get install postgresql (scripts/install-deps, run by \
                    `make test`, installs it)
                    """)
        }
        binaries = "/usr/lib/postgresql/\(version)/bin"

        // /tmp when running as root (the server user must reach the folder, and TMPDIR may be private) or
        // when TMPDIR is long: the socket's path, folder + "/.s.PGSQL.PORT", must fit in 107 bytes.
        let base = getuid() == 0 || NSTemporaryDirectory().utf8.count > 60 ? "/tmp/" : NSTemporaryDirectory()
        folder = base + "linkout-pg-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if getuid() == 0 {
            guard getpwnam("postgres") != nil else {
                throw Failure(
                    description:
                        "running as root, and PostgreSQL refuses to: the tests run it as the `postgres` user, which the Debian package postgresql creates, but there is none"
                )
            }
            try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: folder)
            asServerUser =
                FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
                : ["/usr/sbin/runuser", "-u", "postgres", "--"]
        } else {
            asServerUser = []
        }

        // --no-sync: initdb's own fsyncs buy a throwaway cluster nothing; the server itself runs with fsync on.
        let initdb = try Self.run(
            asServerUser + [
                "\(binaries)/initdb", "-D", "\(folder)/data", "-U", "linkout", "--auth=trust", "-E", "UTF8",
                "--locale=C", "--no-sync",
            ])
        guard initdb.status == 0 else {
            throw Failure(description: "initdb failed (\(initdb.status)): \(initdb.output)")
        }

        // A port that was free a moment ago may be taken by the time the server binds it: try a few.
        var lastLog = ""
        for _ in 0..<5 {
            let candidate = try Self.freePort()
            if try Self.startPostmaster(asServerUser: asServerUser, binaries: binaries, folder: folder, port: candidate) {
                port = candidate
                startWatchdog()
                return
            }
            lastLog = (try? String(contentsOfFile: "\(folder)/postgres.log", encoding: .utf8)) ?? ""
        }
        throw Failure(description: "the test PostgreSQL server did not start: \(lastLog)")
    }

    /// Starts the postmaster on `port` and waits until it answers; false if it did not.
    private static func startPostmaster(asServerUser: [String], binaries: String, folder: String, port: Int) throws -> Bool {
        let process = Process()
        let command =
            asServerUser + [
                "\(binaries)/postgres", "-D", "\(folder)/data", "-k", folder, "-p", String(port),
                "-c", "listen_addresses=127.0.0.1", "-c", "fsync=on", "-c", "synchronous_commit=on",
                "-c", "max_connections=200", "-c", "shared_buffers=64MB",
            ]
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let logPath = "\(folder)/postgres.log"
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = FileHandle(forWritingAtPath: logPath)
        log?.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning, Date() < deadline {
            if (try? Self.run(["\(binaries)/pg_isready", "-q", "-h", "127.0.0.1", "-p", String(port)]))?.status == 0 {
                return true
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        if process.isRunning { kill(process.processIdentifier, SIGQUIT) }
        process.waitUntilExit()
        return false
    }

    /// A server of the caller's own, for tests that stop and start it (the shared one serves every other
    /// test meanwhile). Stopped and removed with `stop()`, or when the test process exits.
    package static func dedicated() throws -> PostgresServer {
        try PostgresServer()
    }

    /// Stops the postmaster (fast shutdown: open connections are cut), keeping its data, as an outage.
    package func stopServer() {
        guard let text = try? String(contentsOfFile: "\(folder)/data/postmaster.pid", encoding: .utf8),
            let pid = Int32(text.split(separator: "\n").first ?? "")
        else { return }
        kill(pid, SIGINT)
        // The postmaster removes its pid file last (its process may linger as a zombie a moment longer).
        let deadline = Date().addingTimeInterval(20)
        while FileManager.default.fileExists(atPath: "\(folder)/data/postmaster.pid"), kill(pid, 0) == 0, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Immediate shutdown, as `pg_ctl stop -m immediate` (SIGQUIT to the postmaster): every backend quits
    /// at once without finishing what it was doing, and the next start runs crash recovery.
    package func crashServer() {
        guard let text = try? String(contentsOfFile: "\(folder)/data/postmaster.pid", encoding: .utf8),
            let pid = Int32(text.split(separator: "\n").first ?? "")
        else { return }
        kill(pid, SIGQUIT)
        let deadline = Date().addingTimeInterval(20)
        while FileManager.default.fileExists(atPath: "\(folder)/data/postmaster.pid"), kill(pid, 0) == 0, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Starts it again on the same port, after `stopServer()`.
    package func startServer() throws {
        guard try Self.startPostmaster(asServerUser: asServerUser, binaries: binaries, folder: folder, port: port) else {
            throw Failure(description: "the test PostgreSQL server did not start again")
        }
    }

    /// Stops the server and removes its folder even if the test process is killed: a shell that waits for
    /// this process to go away.
    private func startWatchdog() {
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = [
            "-c",
            """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            [ -f '\(folder)/data/postmaster.pid' ] && kill -QUIT "$(head -n 1 '\(folder)/data/postmaster.pid')" 2>/dev/null
            sleep 2; rm -rf '\(folder)'
            """,
        ]
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try? watchdog.run()
    }

    package func createDatabase() throws -> String {
        let name = "linkout_" + UUID().uuidString.prefix(8).lowercased()
        let result = try Self.run(["\(binaries)/createdb", "-h", "127.0.0.1", "-p", String(port), "-U", "linkout", name])
        guard result.status == 0 else { throw Failure(description: "createdb failed: \(result.output)") }
        return "postgres://linkout@127.0.0.1:\(port)/\(name)"
    }

    /// Runs one SQL statement with `psql` on the database of `url` (a URL `createDatabase()` gave): its
    /// rows, columns separated by `|`.
    package func query(_ url: String, _ sql: String) throws -> [String] {
        let result = try Self.run(["\(binaries)/psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql])
        guard result.status == 0 else { throw Failure(description: "psql failed: \(result.output)") }
        return result.output.split(separator: "\n").map(String.init)
    }

    /// Fast shutdown (SIGINT to the postmaster), then the folder goes.
    package func stop() {
        if let text = try? String(contentsOfFile: "\(folder)/data/postmaster.pid", encoding: .utf8),
            let pid = Int32(text.split(separator: "\n").first ?? "")
        {
            kill(pid, SIGINT)
            let deadline = Date().addingTimeInterval(10)
            while kill(pid, 0) == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs a command to completion: exit status, and its output then its errors.
    private static func run(_ command: [String]) throws -> (status: Int32, output: String) {
        // From a folder the server user can enter: it may not be allowed into the current one.
        let result = try Command.run(command[0], Array(command.dropFirst()), directory: URL(fileURLWithPath: "/"))
        return (result.status, result.stdoutText + result.stderr)
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
