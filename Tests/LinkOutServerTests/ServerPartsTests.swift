import Testing
@testable import LinkOutServer

/// The server's parts start in the order listed and stop in the reverse, and a part that fails to start
/// leaves nothing running.
@Suite struct ServerPartsTests {
    final class Journal: @unchecked Sendable {
        var lines: [String] = []
    }
    struct Refused: Error, CustomStringConvertible {
        var description: String { "port taken" }
    }

    private func parts(_ journal: Journal, failing: String? = nil) -> ServerParts {
        var parts = ServerParts()
        for name in ["admin", "writer", "api", "loops"] {
            parts.add(name, start: {
                if name == failing { throw Refused() }
                journal.lines.append("start \(name)")
            }, stop: { journal.lines.append("stop \(name)") })
        }
        return parts
    }

    @Test func startInOrderStopInReverseOnce() throws {
        let journal = Journal()
        var parts = parts(journal)
        try parts.startAll()
        parts.stopAll()
        parts.stopAll()
        #expect(journal.lines == [
            "start admin", "start writer", "start api", "start loops",
            "stop loops", "stop api", "stop writer", "stop admin",
        ])
    }

    @Test func aPartThatCannotStartStopsTheOnesBeforeItAndIsNamed() {
        let journal = Journal()
        var parts = parts(journal, failing: "api")
        #expect {
            try parts.startAll()
        } throws: { error in
            "\(error)" == "cannot start api: port taken"
        }
        #expect(journal.lines == ["start admin", "start writer", "stop writer", "stop admin"])
        parts.stopAll()
        #expect(journal.lines.count == 4, "nothing stopped twice")
    }
}
