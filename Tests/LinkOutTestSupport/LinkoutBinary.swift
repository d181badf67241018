import Foundation
import LinkOutCore

/// The real `linkout` binary, built by `swift test` (the integration test target depends on it), or the
/// one `LINKOUT_BINARY` names (`make test` runs the integration tests again against the release build).
package enum LinkoutBinary {
    package static var path: String {
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
    package static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a command to completion: exit status, stdout, stderr.
    package static func run(_ arguments: [String], input: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
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
