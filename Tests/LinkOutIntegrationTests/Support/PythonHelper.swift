import Foundation
import LinkOutTestSupport

/// A Python stand-in the tests start (a destination, Apple's API, a proxy): it prints one JSON line with
/// its `port` and `control` port once bound, and exits when its stdin closes, so a test runner that dies
/// leaves none behind. Written once for every such script.
final class PythonHelper {
    let port: Int
    let controlPort: Int
    private let process = Process()
    /// Held open: the script exits when it closes.
    private let stdin = Pipe()

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// - Parameters:
    ///   - script: the file name under `Tests/LinkOutIntegrationTests/Support/`.
    ///   - errors: a file for the script's stderr, shown when it does not start (a missing module's
    ///     traceback); nil discards it.
    ///   - what: how a failed start names it, and what to do about it.
    init(script: String, arguments: [String], errors: String? = nil, what: String) throws {
        let path = LinkoutBinary.packageRoot.path + "/Tests/LinkOutIntegrationTests/Support/" + script
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", path] + arguments
        let output = Pipe()
        process.standardOutput = output
        if let errors {
            // A file, not a pipe nobody drains: a traceback must not block the script.
            _ = FileManager.default.createFile(atPath: errors, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: errors)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        process.standardInput = stdin
        try process.run()

        let reader = output.fileHandleForReading
        var seen = ""
        let deadline = Date().addingTimeInterval(20)
        while !seen.contains("\n"), Date() < deadline {
            let data = reader.availableData
            if data.isEmpty { break }
            seen += String(decoding: data, as: UTF8.self)
        }
        guard let line = seen.split(separator: "\n").first,
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let port = object["port"] as? Int, let control = object["control"] as? Int
        else {
            process.terminate()
            process.waitUntilExit()
            let stderr = errors.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
            throw StartError(description: "\(what) did not start: \(seen) \(stderr)")
        }
        self.port = port
        self.controlPort = control
    }

    deinit { stop() }

    /// Ends the script. SIGKILL: there is nothing to flush, and the test runner's threads may block
    /// SIGTERM, a mask the child inherits.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
