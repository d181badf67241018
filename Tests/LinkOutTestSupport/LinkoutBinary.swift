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

    /// Runs a `linkout` subcommand to completion in the package's root: exit status, stdout, stderr.
    package static func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try Command.run(path, arguments, directory: packageRoot)
        return (result.status, result.stdoutText, result.stderr)
    }
}
