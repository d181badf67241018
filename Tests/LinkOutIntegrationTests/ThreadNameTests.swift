import Foundation
import LinkOutTestSupport
import Testing

/// An operator looking at a busy linkout with `top -H` or `ps -L` sees what each thread is.
@Suite struct ThreadNameTests {
    @Test func everyThreadOfTheGatewayIsNamed() throws {
        let server = try GatewayProcess.start(threads: 2)
        #expect(try server.get(TokenBuilder.linkOut(token: TokenBuilder.minted())).status == 302)
        let expected: Set = ["linkout-loop0", "linkout-loop1", "linkout-writer", "linkout-admin", "linkout-access", "linkout-wal"]
        // Each thread names itself as it begins, so a name may come a moment after the port is printed.
        let tasks = "/proc/\(server.process.processIdentifier)/task"
        var names: Set<String> = []
        let deadline = Date().addingTimeInterval(5)
        repeat {
            names = Set(
                try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap {
                    try? String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                })
            if expected.isSubset(of: names) { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        #expect(expected.subtracting(names).isEmpty, "missing: \(expected.subtracting(names).sorted()), present: \(names.sorted())")
    }
}
