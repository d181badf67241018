/// Reads a connection's bytes as they arrive, before libevent's parser sees them, for what that parser
/// hides: it cuts a line at a NUL byte, merges obs-fold continuation lines into the previous header, and
/// takes a bare LF as a line end. Once it has parsed a head, none of this can be seen any more.
///
/// It follows libevent's own line splitting (a line ends at LF, and a CR just before that LF belongs to
/// the line end), so its count of heads matches the requests evhttp hands over. Each head ends at its
/// first empty line. A connection carries nothing but heads unless a request has a body, and every body
/// makes linkout close the connection (413 from evhttp for a GET's, 400 `body_not_allowed` for any
/// Content-Length but 0, which is how a HEAD's would come, or 400 `transfer_encoding`), so no body is
/// ever followed by a head that would be answered.
///
/// Incremental: `scan` takes the bytes in chunks of any size, split anywhere (a CR at the end of one
/// chunk and its LF at the start of the next). The first problem found is kept, with the index of the
/// head it is in; scanning stops there, since the answer to that head closes the connection. Ten
/// bytes of state, no allocation.
public struct RequestHeadScanner: Sendable {
    /// Where the scanner is within the current line.
    private enum Position: UInt8, Sendable {
        /// Inside a line (the request line or a header line), or at the very start of a head.
        case inLine
        /// Inside a line, just after a CR: an LF now ends the line.
        case afterCR
        /// At the start of a line after the request line: an empty line here ends the head.
        case lineStart
        /// At the start of such a line, just after a CR: an LF now ends the head.
        case emptyLineCR
    }

    /// Heads completed (their empty line seen) on this connection: the index of the head being scanned.
    public private(set) var completedHeads: UInt32 = 0
    /// The index (0 for the connection's first request) of the head holding `problem`.
    public private(set) var problemHead: UInt32 = 0
    private var position = Position.inLine
    /// The first problem found, if any.
    public private(set) var problem: HeadProblem?

    public init() {}

    /// The problem of the head with this index (0 for the connection's first request), if it has one.
    @inline(__always)
    public func problem(forHead index: UInt32) -> HeadProblem? {
        problemHead == index ? problem : nil
    }

    /// The next bytes received on the connection.
    public mutating func scan(_ bytes: UnsafeRawBufferPointer) {
        guard problem == nil, let start = bytes.baseAddress else { return }
        let count = bytes.count
        var index = 0
        var position = self.position
        // Inside a line every byte above CR (0x0D) is ordinary here (the other control bytes are
        // RequestHeadRules' business, on the parsed head), and is skipped a word at a time. The rest is
        // per line.
        while index < count {
            var byte = start.load(fromByteOffset: index, as: UInt8.self)
            index += 1
            switch position {
            case .inLine:
                // The hot loop. Eight bytes at a time while none of them is at or below CR (0x0D): a byte
                // below 0x0E borrows into its top bit, which no byte from 0x0E to 0x7F has, and `& ~word`
                // drops the bytes from 0x80 up (an exact test that some byte is below 0x0E). Then byte by
                // byte to the one that stopped it, or to the end of the chunk.
                if byte > 0x0D {
                    while index &+ 8 <= count {
                        let word = start.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                        if (word &- 0x0E0E_0E0E_0E0E_0E0E) & ~word & 0x8080_8080_8080_8080 != 0 { break }
                        index &+= 8
                    }
                    repeat {
                        guard index < count else {
                            self.position = .inLine
                            return
                        }
                        byte = start.load(fromByteOffset: index, as: UInt8.self)
                        index += 1
                    } while byte > 0x0D
                }
                if byte == 0x0D {
                    position = .afterCR
                } else if byte == 0x0A {
                    return found(.bareLF)
                } else if byte == 0 {
                    return found(.nulInHeader)
                }
            case .afterCR:
                if byte == 0x0A {
                    position = .lineStart
                } else if byte == 0 {
                    return found(.nulInHeader)
                } else if byte != 0x0D {
                    // A CR inside a line is data to libevent too (and a control byte to RequestHeadRules);
                    // a CR after it may still start the line's CRLF.
                    position = .inLine
                }
            case .lineStart:
                if byte > 0x20 {
                    position = .inLine
                } else if byte == 0x0D {
                    position = .emptyLineCR
                } else if byte == 0x20 || byte == 0x09 {
                    return found(.obsFold)
                } else if byte == 0x0A {
                    return found(.bareLF)
                } else if byte == 0 {
                    return found(.nulInHeader)
                } else {
                    position = .inLine
                }
            case .emptyLineCR:
                if byte == 0x0A {
                    completedHeads &+= 1
                    position = .inLine
                } else if byte == 0 {
                    return found(.nulInHeader)
                } else {
                    // "\r\r\n" is a line holding a CR, "\rX" a line starting with one: both data to libevent.
                    position = byte == 0x0D ? .afterCR : .inLine
                }
            }
        }
        self.position = position
    }

    private mutating func found(_ problem: HeadProblem) {
        self.problem = problem
        problemHead = completedHeads
    }
}
