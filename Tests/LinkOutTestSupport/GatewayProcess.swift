import Foundation
import LinkOutCore

/// A running `linkout serve` process, on port 0, with its own store. (Named for the process it drives,
/// so that it cannot be mistaken for the product's `LinkOutServer` module.)
package final class GatewayProcess {
    package let process = Process()
    /// The scratch folder holding the config and store, when `start` made them; it lives as long as the
    /// process does.
    package let folder: TemporaryFolder?
    package let port: Int
    /// The admin listener's port (`/metrics`).
    package let adminPort: Int
    /// The checkout's API listener's port, when the config has one (0 otherwise).
    package let apiPort: Int
    package let storePath: String
    package let logPath: String
    /// Tests keep the access log in a file rather than on the stdout pipe nobody reads after start.
    package let accessLogPath: String
    private let output = Pipe()

    package struct StartError: Error, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// - Parameters:
    ///   - config: path of the config file (default: the shipped one).
    ///   - wrapper: a command to run linkout under (such as `prlimit --nofile=40:40`).
    ///   - folder: kept alive with the process (see `start`).
    package init(
        config: String? = nil, store: String, threads: Int = 2, extraArguments: [String] = [], wrapper: [String] = [],
        folder: TemporaryFolder? = nil
    ) throws {
        self.folder = folder
        storePath = store
        // A PostgreSQL URL is no place for files: its logs go to a temporary folder.
        let files = store.contains("://") ? NSTemporaryDirectory() + "linkout-pg-logs-" + UUID().uuidString : store
        logPath = files + ".log"
        accessLogPath = files + ".access.log"
        var arguments = [
            "serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--threads", "\(threads)",
            "--store", store, "--access-log", accessLogPath,
        ]
        if let config { arguments += ["--config", config] }
        // Each PostgreSQL instance gets an outage spool of its own, unless the test names one.
        if store.contains("://"), !extraArguments.contains("--spool") { arguments += ["--spool", files + ".spool.sqlite"] }
        arguments += extraArguments
        // Started as a service manager starts it: no signal blocked. The test runner's threads may block
        // some, and a child inherits its parent's mask, which would hide signal-delivery bugs.
        let launch = wrapper + ["/usr/bin/env", "python3", "-c", Self.unblockSignalsAndExec, LinkoutBinary.path]
        process.executableURL = URL(fileURLWithPath: launch[0])
        process.arguments = Array(launch.dropFirst()) + arguments
        process.currentDirectoryURL = LinkoutBinary.packageRoot
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()

        // Wait for the one line that gives the bound port.
        let reader = output.fileHandleForReading
        var seen = ""
        let deadline = Date().addingTimeInterval(20)
        var found: Int?
        var admin = 0
        var api = 0
        while found == nil, Date() < deadline {
            let data = reader.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
            if let range = seen.range(of: #"listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                found = Int(seen[range].split(separator: ":").last!)
            }
            if let range = seen.range(of: #"admin 127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                admin = Int(seen[range].split(separator: ":").last!) ?? 0
            }
            if let range = seen.range(of: #"api 127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                api = Int(seen[range].split(separator: ":").last!) ?? 0
            }
        }
        guard let found else {
            process.terminate()
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw StartError(description: "linkout did not start: \(seen) \(log)")
        }
        port = found
        adminPort = admin
        apiPort = api
    }

    /// The common case in one call: a scratch folder, an SQLite store in it, and either the shipped config
    /// (`links` nil) or `TestConfig.json(links:extra:)` written there. The folder is `folder`.
    package static func start(
        links: String? = nil, extra: String = "", threads: Int = 2, extraArguments: [String] = []
    ) throws -> GatewayProcess {
        let folder = TemporaryFolder()
        let config = links.map { folder.write("config.json", TestConfig.json(links: $0, extra: extra)) }
        return try GatewayProcess(
            config: config, store: folder.file("store.sqlite"), threads: threads, extraArguments: extraArguments,
            folder: folder)
    }

    /// Clears the signal mask, then becomes the program named by the first argument.
    package static let unblockSignalsAndExec = """
        import os, signal, sys
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.execv(sys.argv[1], sys.argv[1:])
        """

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if storePath.contains("://") {
            try? FileManager.default.removeItem(atPath: logPath)
            try? FileManager.default.removeItem(atPath: accessLogPath)
            let spool = String(logPath.dropLast(".log".count)) + ".spool.sqlite"
            for suffix in ["", "-wal", "-shm", ".lock"] { try? FileManager.default.removeItem(atPath: spool + suffix) }
        }
    }

    /// SIGTERM, then the exit status.
    @discardableResult
    package func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// kill -9: no chance to flush anything.
    package func crash() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    package func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// CPU time the process has used, in clock ticks (user + system).
    package var cpuTicks: Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3, utime 14 and stime 15 (1-based over the whole line).
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    package var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The access log's lines, parsed, once at least `count` are there (it is written in batches).
    package func accessLog(atLeast count: Int, timeout: TimeInterval = 5) -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(timeout)
        var lines: [[String: Any]] = []
        repeat {
            let text = (try? String(contentsOfFile: accessLogPath, encoding: .utf8)) ?? ""
            lines = text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            if lines.count >= count { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return lines
    }

    package func get(_ target: String, headers: [String] = []) throws -> HTTPResponse {
        try fetch(port: port, "GET", target, headers: headers)
    }
}

/// The export, parsed: one dictionary per token.
package func exportTokens(store: String) throws -> [[String: Any]] {
    let result = try LinkoutBinary.run(["tokens", "export", "--store", store])
    guard result.status == 0 else { throw GatewayProcess.StartError(description: "export failed: \(result.stderr)") }
    return result.stdout.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}
