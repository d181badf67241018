import Foundation

/// A program run to completion by a test: its exit status, its standard output, its standard error.
/// Written once for the tests that run one (the linkout binary, Python checkers, curl, the README's
/// commands), so each says what it runs and not how.
///
/// Standard error goes to a file rather than a second pipe: a child that fills the unread stderr pipe
/// while the test blocks reading stdout would wait for ever.
package enum Command {
    package struct Result {
        package let status: Int32
        package let stdout: Data
        package let stderr: String
        package var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// - Parameters:
    ///   - executable: an absolute path; `/usr/bin/env` with the program as the first argument finds one on PATH.
    ///   - input: written to the child's stdin, which is then closed; nil leaves stdin as the test's.
    package static func run(
        _ executable: String, _ arguments: [String], directory: URL? = nil, environment: [String: String]? = nil,
        input: Data? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        let errorsPath = NSTemporaryDirectory() + "linkout-command-\(UUID().uuidString).stderr"
        _ = FileManager.default.createFile(atPath: errorsPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errorsPath) }
        let errors = FileHandle(forWritingAtPath: errorsPath)
        process.standardError = errors
        let stdin = input.map { _ in Pipe() }
        if let stdin { process.standardInput = stdin }
        try process.run()
        if let stdin, let input {
            stdin.fileHandleForWriting.write(input)
            try stdin.fileHandleForWriting.close()
        }
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? errors?.close()
        let stderr = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
        return Result(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// `python3` with these arguments, found on PATH.
    package static func python(_ arguments: [String], directory: URL? = nil, input: Data? = nil) throws -> Result {
        try run("/usr/bin/env", ["python3"] + arguments, directory: directory, input: input)
    }
}
