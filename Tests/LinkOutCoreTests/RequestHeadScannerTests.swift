import Testing
@testable import LinkOutCore

@Suite("request head scanner")
struct RequestHeadScannerTests {
    /// Scans `bytes` in chunks of `chunk` bytes (the whole at once when nil).
    private func scan(_ bytes: [UInt8], chunk: Int? = nil) -> RequestHeadScanner {
        var scanner = RequestHeadScanner()
        let size = max(1, chunk ?? bytes.count)
        var offset = 0
        repeat {
            let end = min(bytes.count, offset + size)
            bytes[offset..<end].withUnsafeBytes { scanner.scan($0) }
            offset = end
        } while offset < bytes.count
        return scanner
    }

    private func scan(_ text: String, chunk: Int? = nil) -> RequestHeadScanner {
        scan(Array(text.utf8), chunk: chunk)
    }

    /// Several ways of splitting: whole, then in chunks of 1, 2, 3, 5, 7, 9 and 13 bytes; all must agree.
    private func problem(_ bytes: [UInt8]) -> (HeadProblem?, UInt32)? {
        let whole = scan(bytes)
        for chunk in [1, 2, 3, 5, 7, 9, 13] {
            let split = scan(bytes, chunk: chunk)
            guard split.problem == whole.problem, split.problemHead == whole.problemHead,
                  split.completedHeads == whole.completedHeads else {
                Issue.record("chunks of \(chunk) disagree with the whole: \(String(describing: split.problem)) vs \(String(describing: whole.problem))")
                return nil
            }
        }
        return whole.problem.map { ($0, whole.problemHead) } ?? (nil, whole.completedHeads)
    }

    private func problem(_ text: String) -> HeadProblem? {
        problem(Array(text.utf8))?.0
    }

    static let good = "GET /nl?externalPurchaseToken=abc&bundleId=com.example HTTP/1.1\r\nHost: x\r\nUser-Agent: Mozilla/5.0\t(iPhone)\r\nAccept: */*\r\n\r\n"

    @Test func goodHeadsPass() {
        #expect(problem(Self.good) == nil)
        #expect(scan(Self.good).completedHeads == 1)
        #expect(problem("GET / HTTP/1.0\r\n\r\n") == nil)
        #expect(problem("HEAD /nl HTTP/1.1\r\nHost: x\r\nX-Empty:\r\n\r\n") == nil)
        // Non-ASCII and other control bytes are not this scanner's business (RequestHeadRules sees them).
        #expect(problem(Array("GET / HTTP/1.1\r\nX: ".utf8) + [0xC3, 0xA9, 0x01, 0x7F] + Array("\r\n\r\n".utf8))?.0 == nil)
        // A CR inside a line, or two before the LF, is data to libevent as well.
        #expect(problem("GET / HTTP/1.1\r\nX: a\rb\r\nY: c\r\r\n\r\n") == nil)
        // A partial head: nothing yet.
        let partial = scan("GET / HTTP/1.1\r\nHost: x\r\n\r")
        #expect(partial.problem == nil && partial.completedHeads == 0)
    }

    @Test func nul() {
        #expect(problem(Array("GET / HTTP/1.1\r\nHost: x\r\nX-A: a".utf8) + [0] + Array("b\r\n\r\n".utf8))?.0 == .nulInHeader)
        #expect(problem(Array("GET / HTTP/1.1\r\nHost: x".utf8) + [0] + Array("\r\n\r\n".utf8))?.0 == .nulInHeader)
        // At a line's start, after a CR, in the request line, and as the whole value.
        #expect(problem(Array("GET / HTTP/1.1\r\n".utf8) + [0] + Array("X: a\r\n\r\n".utf8))?.0 == .nulInHeader)
        #expect(problem(Array("GET / HTTP/1.1\r\nX: a\r".utf8) + [0] + Array("\n\r\n".utf8))?.0 == .nulInHeader)
        #expect(problem(Array("GET / HTTP/1.1".utf8) + [0] + Array("junk\r\n\r\n".utf8))?.0 == .nulInHeader)
        #expect(problem(Array("GET / HTTP/1.1\r\nX-A: ".utf8) + [0] + Array("\r\n\r\n".utf8))?.0 == .nulInHeader)
        #expect(problem(Array("GET / HTTP/1.1\r\nHost: x\r\n\r".utf8) + [0] + Array("\n".utf8))?.0 == .nulInHeader)
    }

    @Test func obsFold() {
        #expect(problem("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n") == .obsFold)
        #expect(problem("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb\r\n\r\n") == .obsFold)
        #expect(problem("GET / HTTP/1.1\r\nX-A: a\r\n Host: evil\r\n\r\n") == .obsFold)
        // Spaces inside a line are not folds.
        #expect(problem("GET / HTTP/1.1\r\nX-A:  a  b \r\n\r\n") == nil)
    }

    @Test func bareLF() {
        #expect(problem("GET / HTTP/1.1\nHost: x\n\n") == .bareLF)
        #expect(problem("GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n") == .bareLF)
        // The head's end: LF alone after a CRLF, and CRLF then LF.
        #expect(problem("GET / HTTP/1.1\r\nHost: x\r\n\n") == .bareLF)
        #expect(problem("GET / HTTP/1.1\r\nHost: x\n\r\n") == .bareLF)
        // A CR that is not right before the LF does not make it a CRLF.
        #expect(problem("GET / HTTP/1.1\r\nHost: x\rX\n\r\n") == .bareLF)
    }

    @Test func chunkBoundaries() {
        // The CR at the end of one chunk, its LF at the start of the next; the empty line split too.
        var scanner = RequestHeadScanner()
        for part in ["GET / HTTP/1.1\r", "\nHost: x\r", "\n", "\r", "\n"] {
            Array(part.utf8).withUnsafeBytes { scanner.scan($0) }
        }
        #expect(scanner.problem == nil)
        #expect(scanner.completedHeads == 1)
        // A fold whose space starts the next chunk.
        scanner = RequestHeadScanner()
        for part in ["GET / HTTP/1.1\r\nX: a\r\n", " b\r\n\r\n"] {
            Array(part.utf8).withUnsafeBytes { scanner.scan($0) }
        }
        #expect(scanner.problem == .obsFold)
        // An empty chunk changes nothing.
        scanner = RequestHeadScanner()
        scanner.scan(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(scanner.problem == nil && scanner.completedHeads == 0)
        // Every rule, every split (problem() checks chunks of 1 to 13 bytes against the whole).
        #expect(problem(Self.good + Self.good + "GET / HTTP/1.1\r\nHost: x\n\r\n") == .bareLF)
    }

    @Test func pipelinedHeadsAreCountedAndTheProblemIsTheRightOnes() {
        let two = scan(Self.good + Self.good)
        #expect(two.problem == nil && two.completedHeads == 2)
        // The first head is fine, the second has a fold: the problem belongs to head 1, not head 0.
        let second = scan(Self.good + "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n" + Self.good)
        #expect(second.problem == .obsFold)
        #expect(second.problemHead == 1)
        #expect(second.problem(forHead: 0) == nil)
        #expect(second.problem(forHead: 1) == .obsFold)
        #expect(second.completedHeads == 1, "scanning stops at the first problem")
        // The third, split byte by byte.
        let prefix: [UInt8] = Array((Self.good + Self.good + "GET / HTTP/1.1\r\nX: a").utf8)
        let suffix: [UInt8] = Array("\r\n\r\n".utf8)
        let third = scan(prefix + [0] + suffix, chunk: 1)
        #expect(third.problem(forHead: 2) == .nulInHeader)
        #expect(third.problem(forHead: 0) == nil && third.problem(forHead: 1) == nil)
    }

    /// Lines are skipped eight bytes at a time: a special byte at every offset within and across words,
    /// and bytes from 0x80 up (which must not hide one), are still found.
    @Test func everyOffsetInAWord() {
        for offset in 0..<24 {
            let filler = String(repeating: "a", count: offset)
            #expect(problem("GET /\(filler) HTTP/1.1\nHost: x\r\n\r\n") == .bareLF, "offset \(offset)")
            #expect(problem("GET / HTTP/1.1\r\nX: \(filler)\r\n b\r\n\r\n") == .obsFold, "offset \(offset)")
            let nul = Array("GET /\(filler)".utf8) + [0] + Array(" HTTP/1.1\r\n\r\n".utf8)
            #expect(problem(nul)?.0 == .nulInHeader, "offset \(offset)")
            let high = Array("GET / HTTP/1.1\r\nX: ".utf8) + [UInt8](repeating: 0xFF, count: offset) + [0x0A] + Array("\r\n".utf8)
            #expect(problem(high)?.0 == .bareLF, "offset \(offset)")
            let good = scan("GET /\(filler) HTTP/1.1\r\nHost: \(filler)\r\n\r\n")
            #expect(good.problem == nil && good.completedHeads == 1, "offset \(offset)")
        }
    }

    @Test func staysSmall() {
        #expect(MemoryLayout<RequestHeadScanner>.size <= 10)
    }
}
