import Foundation
import LinkOutTestSupport
import Testing

/// An operator looking at a busy linkout with `top -H` or `ps -L` sees what each thread is.
@Suite struct ThreadNameTests {
    @Test func everyThreadOfTheGatewayIsNamed() throws {
        let server = try GatewayProcess.start(threads: 2)
        // Serve one link-out first, so the writer has committed and every thread is up.
        #expect(try server.get(TokenBuilder.linkOut(token: TokenBuilder.minted())).status == 302)
        let tasks = "/proc/\(server.process.processIdentifier)/task"
        let names = try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap {
            try? String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for expected in ["linkout-loop-0", "linkout-loop-1", "linkout-writer", "linkout-admin", "linkout-access", "linkout-wal"] {
            #expect(names.contains(expected), "\(expected) not among \(names.sorted())")
        }
    }
}
