import Foundation
import Logging
import Testing

@testable import LinkOutServer

/// The operator log's text handler writes each record on one physical line: newlines in the message, in
/// metadata values (the logger's own too) and in an `error:` are escaped.
@Suite struct OneLineLogHandlerTests {
    /// What the handler wrote, as one string.
    final class Captured: TextOutputStream, @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""
        func write(_ string: String) { lock.withLock { text += string } }
        var lines: [Substring] { lock.withLock { text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() } }
    }

    struct MultiLineError: Error, CustomStringConvertible {
        var description: String { "first\nsecond" }
    }

    private func logger(_ captured: Captured) -> Logger {
        var logger = Logger(label: "linkout") { label in
            OneLineLogHandler(wrapping: StreamLogHandler(label: label, stream: captured, metadataProvider: nil))
        }
        logger[metadataKey: "instance"] = "a\nb"
        return logger
    }

    @Test func aRecordWithNewlinesIsOneLine() throws {
        let captured = Captured()
        let logger = logger(captured)
        logger.warning(
            "PostgreSQL unreachable at start\nsecond line\r\n",
            metadata: [
                "error": "refused\n\tIs the server running?", "list": ["x\ny"], "nested": ["k": "v\nw"],
            ])
        logger.error("failed", error: MultiLineError())
        let lines = captured.lines
        #expect(lines.count == 2, "\(lines)")
        let first = try #require(lines.first)
        #expect(first.contains(#"warning linkout:"#))
        #expect(first.contains(#"PostgreSQL unreachable at start\nsecond line\r\n"#))
        #expect(first.contains(#"error=refused\n"# + "\t" + #"Is the server running?"#))
        #expect(first.contains(#"instance=a\nb"#), "the logger's own metadata too")
        #expect(first.contains("list=") && first.contains("nested="), "arrays and dictionaries too: \(first)")
        #expect(lines.last?.contains(#"error.message=first\nsecond"#) == true, "\(lines)")
    }

    @Test func aPlainRecordIsAsStreamLogHandlerWritesIt() throws {
        let plain = Captured()
        let wrapped = Captured()
        var expected = Logger(label: "linkout") { StreamLogHandler(label: $0, stream: plain, metadataProvider: nil) }
        expected[metadataKey: "instance"] = "a"
        var logger = logger(wrapped)
        logger[metadataKey: "instance"] = "a"
        expected.notice("listening", metadata: ["port": "8080"])
        logger.notice("listening", metadata: ["port": "8080"])
        // The timestamps are to the second: compare what follows them.
        func tail(_ line: Substring?) -> Substring? { line.map { $0.drop { $0 != " " } } }
        #expect(tail(wrapped.lines.first) == tail(plain.lines.first))
        #expect(tail(wrapped.lines.first)?.contains("instance=a port=8080") == true, "\(wrapped.lines)")
    }
}
