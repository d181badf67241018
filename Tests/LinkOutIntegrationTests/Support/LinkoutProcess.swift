import Foundation
import LinkOutCore

/// The real `linkout` binary, built by `swift test` (the test target depends on it).
enum LinkoutBinary {
    static var path: String {
        if let override = ProcessInfo.processInfo.environment["LINKOUT_BINARY"] { return override }
        // The test runner lives in the same build folder as the products.
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = runner.deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("linkout").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return "linkout"
    }

    /// The package's root, for the shipped config and pages.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a command to completion: exit status, stdout, stderr.
    static func run(_ arguments: [String], input: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = packageRoot
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read before waiting so a large output cannot fill the pipe and stall the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }
}

/// A scratch folder for one test, removed at the end.
final class TemporaryFolder {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "linkout-test-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    func write(_ name: String, _ text: String) -> String {
        let target = file(name)
        _ = FileManager.default.createFile(atPath: target, contents: Data(text.utf8))
        return target
    }
}

/// A running `linkout serve`, on port 0, with its own store.
final class LinkoutServer {
    let process = Process()
    let port: Int
    /// The admin listener's port (`/metrics`).
    let adminPort: Int
    /// The checkout's API listener's port, when the config has one (0 otherwise).
    let apiPort: Int
    let storePath: String
    let logPath: String
    /// Tests keep the access log in a file rather than on the stdout pipe nobody reads after start.
    let accessLogPath: String
    private let output = Pipe()

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// - Parameters:
    ///   - config: path of the config file (default: the shipped one).
    ///   - wrapper: a command to run linkout under (such as `prlimit --nofile=40:40`).
    init(config: String? = nil, store: String, threads: Int = 2, extraArguments: [String] = [], wrapper: [String] = []) throws {
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

    /// Clears the signal mask, then becomes the program named by the first argument.
    static let unblockSignalsAndExec = """
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
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// kill -9: no chance to flush anything.
    func crash() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// CPU time the process has used, in clock ticks (user + system).
    var cpuTicks: Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3, utime 14 and stime 15 (1-based over the whole line).
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The access log's lines, parsed, once at least `count` are there (it is written in batches).
    func accessLog(atLeast count: Int, timeout: TimeInterval = 5) -> [[String: Any]] {
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

    func get(_ target: String, headers: [String] = []) throws -> HTTPResponse {
        try fetch(port: port, "GET", target, headers: headers)
    }
}

/// The export, parsed: one dictionary per token.
func exportTokens(store: String) throws -> [[String: Any]] {
    let result = try LinkoutBinary.run(["tokens", "export", "--store", store])
    guard result.status == 0 else { throw LinkoutServer.StartError(description: "export failed: \(result.stderr)") }
    return result.stdout.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}
