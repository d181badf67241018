/// Reads an HTTP/1.1 request head straight from the connection's bytes, strictly, in as many reads as it
/// arrives in, without allocating.
///
/// Hand-written because nothing else fits: no Swift library offers a strict, incremental,
/// allocation-free HTTP/1.1 head parser usable without SwiftNIO (NIO's llhttp bridge lives inside its
/// channel pipeline), and evhttp, which this replaces, is lenient where smuggling lives (bare LF,
/// obs-fold, a NUL cutting a line), which once took two more passes over each head beside it.
///
/// The rules (RFC 9112, strictly; the first problem in byte order wins, and it is reported as soon as it
/// is certain, before the head is complete):
/// - Lines end with CRLF only: a bare LF is `bareLF`, a CR not followed by LF `bareCR`, and a NUL
///   anywhere is `nulInHeader` (checked before anything else about the same byte).
/// - `method SP target SP HTTP/D.D CRLF`, one space each; empty lines before it are `badRequestLine`,
///   as is a missing part (`GET /x`, HTTP/0.9's form), a byte that is not a token's in the method, an
///   extra space after the target, or a version that is not `HTTP/` DIGIT `.` DIGIT.
/// - The method is one of `HTTPMethod`, case-sensitively, else `unknownMethod` (501): at the space that
///   ends it, or at its eighth byte (no known method is that long).
/// - The target is origin-form (`/` first) or absolute-form (a letter first: `http://` or `https://` in
///   any case, a non-empty authority of `isHostByte` bytes not starting with `:`, then the path and query
///   if any, which become `target`); anything else is `unsupportedTargetForm` (`*`, CONNECT's
///   `host:port`, `nl`, another scheme, user info, no host, two spaces after the method). Its bytes are
///   0x21...0x7E, else `invalidTarget`; `targetTooLong` (414) at the first byte past `maxTargetBytes`,
///   counted over the whole target as sent. Not origin-form is known at its first byte; a bad
///   absolute-form at the space after it.
/// - The version is 1.1 or 1.0; another DIGIT.DIGIT is `unsupportedVersion` (505).
/// - A header line starting with SP or HTAB is `obsFold`. The name is 1*tchar followed at once by `:`;
///   a space or control byte in it is `controlCharacterInHeader`, no name, no colon or any other byte
///   `invalidHeaderName`. The value is VCHAR, obs-text, SP and HTAB; any other control byte or DEL is
///   `controlCharacterInHeader`. Values are trimmed of leading and trailing SP and HTAB.
/// - Transfer-Encoding, of any value, is `transferEncoding`. Content-Length is 1*DIGIT, at most 18
///   digits (`invalidContentLength`), and only once (`duplicateContentLength`). Host only once
///   (`duplicateHost`), only host-and-port bytes (`badHost`), and required from HTTP/1.1
///   (`missingHost`). Authorization, Content-Type, User-Agent, Purpose and Sec-Purpose only once
///   (`duplicateHeader`). Connection's tokens `close` and `keep-alive` set `keepAlive`.
/// - A head longer than `maxHeadBytes`, or with more than `maxHeaderLines` header lines, is
///   `headTooLarge` (431).
/// A duplicate, or Transfer-Encoding, is found at the name's colon; a value's own syntax at its line's
/// CR; `missingHost` at the head's final LF.
///
/// Each byte is scanned once over all calls (a value's surrounding spaces, a known field's value, a
/// name compared to the known ones and an absolute-form target's scheme and authority are read again,
/// once, when they are complete). The target and values are skipped eight bytes at a time.
public struct RequestHeadParser: Sendable {
    /// What `parse` found.
    public enum Outcome: Sendable, Equatable {
        /// The head has not ended yet and nothing is wrong so far: call again with more bytes.
        case incomplete
        /// The whole head, its ranges into the buffer given.
        case head(RequestHead)
        /// The head breaks a rule: answer `problem.status` and close the connection.
        case refused(HeadProblem)
    }

    /// The largest head accepted, its final CRLF CRLF included (h11's default too).
    public static let defaultMaxHeadBytes = 16_384
    /// The longest target accepted.
    public static let defaultMaxTargetBytes = 8_192
    /// The most header lines accepted.
    public static let defaultMaxHeaderLines = 100

    /// Where the parser is in the head: what the next byte may be.
    private enum State: UInt8, Sendable {
        /// In the method, from the head's first byte.
        case method
        /// After the method's space: the target's first byte must be `/` (origin-form) or a letter
        /// (absolute-form).
        case targetStart
        /// In the target.
        case target
        /// In `HTTP/D.D` or at the CR after it; the position within it is counted from the target's end.
        case version
        /// After the request line's CR.
        case requestLineLF
        /// At the start of a header line, or of the empty line that ends the head.
        case lineStart
        /// In a header name.
        case name
        /// In a header value (after the colon).
        case value
        /// After a header line's CR.
        case valueLF
        /// After the CR of the empty line.
        case endLF
        /// The head is complete (`head`).
        case done
        /// The head is refused (`problem`).
        case refused
    }

    /// The header fields the parser reads, beyond checking them.
    private enum Field: UInt8, Sendable {
        case other, host, contentLength, connection, userAgent, purpose, secPurpose, acceptLanguage, stripeSignature, paddleSignature
        case authorization, contentType, expect
    }

    // Configuration, kept by `reset`.
    private let maxHeadBytes: Int
    private let maxTargetBytes: Int
    private let maxHeaderLines: Int
    /// The configured extra headers' names, in lower case; empty when not configured (no name is empty).
    private let extraName0: [UInt8]
    private let extraName1: [UInt8]

    // Where the parser is.
    private var state = State.method
    /// The next byte to read.
    private var offset = 0
    /// The head so far; complete in `.done`.
    private var head = RequestHead()
    /// Set in `.refused`.
    private var problem = HeadProblem.badRequestLine
    /// The method's bytes so far, the first in the highest used byte (at most 7 bytes).
    private var methodWord: UInt64 = 0
    /// Where the current target, or header name, started.
    private var tokenStart = 0
    /// The target being read started with a letter: absolute-form, checked at its end.
    private var absoluteForm = false
    /// Where the current header value started (just after the colon).
    private var valueStart = 0
    /// The header being read.
    private var field = Field.other
    /// Whether the header being read is extra header 0 (bit 0) or 1 (bit 1).
    private var extraMatch: UInt8 = 0
    /// Header lines begun so far.
    private var headerLines = 0
    private var contentLengthSeen = false
    /// Whether a Connection header held `close`, or `keep-alive`, so far.
    private var connectionClose = false
    private var connectionKeepAlive = false

    /// - Parameters:
    ///   - extraHeaders: up to two header names (tokens, compared case-insensitively) whose values the head
    ///     gives as `extra0` and `extra1`: a forwarded-for or country header set by a proxy in front. One
    ///     may also be a header the parser reads itself.
    ///   - maxHeadBytes: the largest head, its final CRLF CRLF included; more is `headTooLarge`.
    ///   - maxTargetBytes: the longest target; longer is `targetTooLong`.
    ///   - maxHeaderLines: the most header lines; more is `headTooLarge`.
    public init(
        extraHeaders: [String] = [], maxHeadBytes: Int = defaultMaxHeadBytes, maxTargetBytes: Int = defaultMaxTargetBytes,
        maxHeaderLines: Int = defaultMaxHeaderLines
    ) {
        precondition(extraHeaders.count <= 2, "at most two extra headers")
        precondition(
            maxHeadBytes > 0 && maxTargetBytes > 0 && maxHeaderLines >= 0, "byte limits must be positive, the line limit not negative")
        let names = extraHeaders.map { name -> [UInt8] in
            precondition(!name.isEmpty && name.utf8.allSatisfy(Self.isTokenByte), "extra header '\(name)' is not a header name")
            return name.utf8.map(Self.lowercased)
        }
        extraName0 = names.count > 0 ? names[0] : []
        extraName1 = names.count > 1 ? names[1] : []
        self.maxHeadBytes = maxHeadBytes
        self.maxTargetBytes = maxTargetBytes
        self.maxHeaderLines = maxHeaderLines
    }

    /// Ready for the next request on the connection (keeps the configuration). Its bytes are given from
    /// its own first byte: the previous head's `headLength` (plus any body) on.
    ///
    /// Field by field in place: building a new parser and assigning it copied the whole parser twice, and
    /// retained and released its configured names, for every request.
    public mutating func reset() {
        state = .method
        offset = 0
        head = RequestHead()
        problem = .badRequestLine
        methodWord = 0
        tokenStart = 0
        absoluteForm = false
        valueStart = 0
        field = .other
        extraMatch = 0
        headerLines = 0
        contentLengthSeen = false
        connectionClose = false
        connectionKeepAlive = false
    }

    /// Reads the head.
    ///
    /// `bytes`: everything received for this request so far, starting at the head's first byte (bytes
    /// after the head, a body or a pipelined request, are left alone). After `.incomplete`, call again
    /// with the same bytes and more appended (the buffer may have moved): the parser goes on from where it
    /// stopped. After `.head` or `.refused`, it answers the same until `reset`. No heap allocation.
    public mutating func parse(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        switch state {
        case .done: return .head(head)
        case .refused: return .refused(problem)
        default: break
        }
        precondition(bytes.count >= offset, "parse was given fewer bytes than before")
        guard let base = bytes.baseAddress else { return .incomplete }
        // Bytes past the limit are never read: the head must have ended before it.
        let end = min(bytes.count, maxHeadBytes)
        var i = offset
        var state = self.state

        // One dispatch on where the last call stopped; from there each part of the head falls through to
        // the next, so a line costs one (well-predicted) jump, not one per part. A part that runs out of
        // bytes leaves `state` at itself and breaks out of the switch, which ends the loop.
        while i < end {
            switch state {
            case .method:
                while i < end {
                    let byte = base.load(fromByteOffset: i, as: UInt8.self)
                    guard Self.isTokenByte(byte) else { break }
                    // No known method has eight bytes: certain now, whatever follows.
                    if i >= 7 { return refuse(.unknownMethod, at: i) }
                    methodWord = methodWord << 8 | UInt64(byte)
                    i &+= 1
                }
                if i == end { break }
                let byte = base.load(fromByteOffset: i, as: UInt8.self)
                guard byte == Self.sp && i > 0 else { return refuse(Self.requestLineProblem(byte, otherwise: .badRequestLine), at: i) }
                guard let method = Self.method(methodWord) else { return refuse(.unknownMethod, at: i) }
                head.method = method
                i &+= 1
                state = .targetStart
                fallthrough

            case .targetStart:
                if i == end { break }
                let byte = base.load(fromByteOffset: i, as: UInt8.self)
                if byte != Self.slash {
                    // RFC 9112 §3.2.2: a server must accept absolute-form (what a client sends to a proxy).
                    // Its scheme starts with a letter; a CR ends the line without a target; anything else
                    // (`*`, `%`, a space: two after the method) is no target form linkout serves.
                    guard Self.lowercased(byte) &- UInt8(ascii: "a") < 26 else {
                        return refuse(Self.requestLineProblem(byte, otherwise: .unsupportedTargetForm), at: i)
                    }
                    absoluteForm = true
                }
                tokenStart = i
                i &+= 1
                state = .target
                fallthrough

            case .target:
                // Up to the byte that would make the target too long.
                i = Self.skipTargetBytes(base, from: i, to: min(end, tokenStart &+ maxTargetBytes))
                if i == end { break }
                let byte = base.load(fromByteOffset: i, as: UInt8.self)
                guard byte == Self.sp else {
                    if Self.isTargetByte(byte) { return refuse(.targetTooLong, at: i) }
                    // A CR ends the line without a version (HTTP/0.9's form).
                    return refuse(Self.requestLineProblem(byte, otherwise: .invalidTarget), at: i)
                }
                if absoluteForm {
                    // The authority is checked, then set aside as Host is: no answer depends on either.
                    guard let path = Self.absoluteFormPath(base, from: tokenStart, to: i) else {
                        return refuse(.unsupportedTargetForm, at: i)
                    }
                    head.target = path..<i
                } else {
                    head.target = tokenStart..<i
                }
                i &+= 1
                state = .version
                fallthrough

            case .version:
                // `HTTP/D.D` then CR, the position counted from the target's end.
                let versionStart = head.target.upperBound &+ 1
                while i < end {
                    let byte = base.load(fromByteOffset: i, as: UInt8.self)
                    let position = i &- versionStart
                    let expected: Bool
                    switch position {
                    case 0..<5: expected = byte == Self.httpSlash(position)
                    case 5: expected = Self.isDigit(byte)
                    case 6: expected = byte == Self.dot
                    case 7:
                        guard Self.isDigit(byte) else { return refuse(Self.requestLineProblem(byte, otherwise: .badRequestLine), at: i) }
                        let major = base.load(fromByteOffset: i &- 2, as: UInt8.self)
                        guard major == Self.one, byte == Self.zero || byte == Self.one else { return refuse(.unsupportedVersion, at: i) }
                        head.minorVersion = Int(byte &- Self.zero)
                        expected = true
                    default: expected = byte == Self.cr
                    }
                    guard expected else { return refuse(Self.requestLineProblem(byte, otherwise: .badRequestLine), at: i) }
                    i &+= 1
                    if position == 8 { break }
                }
                if i &- versionStart < 9 { break }
                state = .requestLineLF
                fallthrough

            case .requestLineLF:
                if i == end { break }
                let byte = base.load(fromByteOffset: i, as: UInt8.self)
                guard byte == Self.lf else { return refuse(byte == 0 ? .nulInHeader : .bareCR, at: i) }
                i &+= 1
                state = .lineStart
            // On to the header lines, through the loop's dispatch.

            case .lineStart:
                let byte = base.load(fromByteOffset: i, as: UInt8.self)
                guard Self.isTokenByte(byte) else {
                    if byte == Self.cr {
                        i &+= 1
                        state = .endLF
                        continue
                    }
                    return refuse(byte == Self.sp || byte == Self.htab ? .obsFold : Self.nameProblem(byte), at: i)
                }
                headerLines &+= 1
                if headerLines > maxHeaderLines { return refuse(.headTooLarge, at: i) }
                tokenStart = i
                i &+= 1
                state = .name
                fallthrough

            case .name:
                while i < end, Self.isTokenByte(base.load(fromByteOffset: i, as: UInt8.self)) { i &+= 1 }
                if i == end { break }
                let byte = base.load(fromByteOffset: i, as: UInt8.self)
                guard byte == Self.colon else { return refuse(Self.nameProblem(byte), at: i) }
                if let problem = startField(base, name: tokenStart..<i) { return refuse(problem, at: i) }
                i &+= 1
                valueStart = i
                state = .value
                fallthrough

            case .value:
                var byte: UInt8 = 0
                while true {
                    i = Self.skipFieldValueBytes(base, from: i, to: end)
                    if i == end { break }
                    byte = base.load(fromByteOffset: i, as: UInt8.self)
                    guard byte == Self.htab else { break }
                    i &+= 1
                }
                if i == end { break }
                guard byte == Self.cr else {
                    return refuse(byte == 0 ? .nulInHeader : byte == Self.lf ? .bareLF : .controlCharacterInHeader, at: i)
                }
                if let problem = endField(base, value: valueStart..<i) { return refuse(problem, at: i) }
                i &+= 1
                state = .valueLF
                fallthrough

            case .valueLF:
                if i == end { break }
                let byte = base.load(fromByteOffset: i, as: UInt8.self)
                guard byte == Self.lf else { return refuse(byte == 0 ? .nulInHeader : .bareCR, at: i) }
                i &+= 1
                state = .lineStart

            case .endLF:
                let byte = base.load(fromByteOffset: i, as: UInt8.self)
                guard byte == Self.lf else { return refuse(byte == 0 ? .nulInHeader : .bareCR, at: i) }
                i &+= 1
                if head.minorVersion == 1 && head.host == nil { return refuse(.missingHost, at: i) }
                head.keepAlive = !connectionClose && (head.minorVersion == 1 || connectionKeepAlive)
                head.headLength = i
                self.state = .done
                offset = i
                return .head(head)

            case .done, .refused:
                preconditionFailure("unreachable: answered before the loop")
            }
        }
        self.state = state
        offset = i
        if bytes.count > maxHeadBytes { return refuse(.headTooLarge, at: i) }
        return .incomplete
    }

    private mutating func refuse(_ problem: HeadProblem, at index: Int) -> Outcome {
        self.problem = problem
        state = .refused
        offset = index
        return .refused(problem)
    }

    // MARK: - Fields

    /// At a name's colon: which field it is, and whether it may be here at all.
    private mutating func startField(_ base: UnsafeRawPointer, name: Range<Int>) -> HeadProblem? {
        let start = base + name.lowerBound
        var field = Field.other
        switch name.count {
        case 6:
            if Self.equalsLowercase(start, "expect") { field = .expect }
        case 4:
            if Self.equalsLowercase(start, "host") {
                if head.host != nil { return .duplicateHost }
                field = .host
            }
        case 7:
            if Self.equalsLowercase(start, "purpose") {
                if head.purpose != nil { return .duplicateHeader }
                field = .purpose
            }
        case 10:
            if Self.equalsLowercase(start, "user-agent") {
                if head.userAgent != nil { return .duplicateHeader }
                field = .userAgent
            } else if Self.equalsLowercase(start, "connection") {
                field = .connection
            }
        case 11:
            if Self.equalsLowercase(start, "sec-purpose") {
                if head.secPurpose != nil { return .duplicateHeader }
                field = .secPurpose
            }
        case 12:
            if Self.equalsLowercase(start, "content-type") {
                if head.contentType != nil { return .duplicateHeader }
                field = .contentType
            }
        case 13:
            if Self.equalsLowercase(start, "authorization") {
                if head.authorization != nil { return .duplicateHeader }
                field = .authorization
            }
        case 14:
            if Self.equalsLowercase(start, "content-length") {
                if contentLengthSeen { return .duplicateContentLength }
                field = .contentLength
            }
        case 15:
            if Self.equalsLowercase(start, "accept-language") { field = .acceptLanguage }
        case 16:
            if Self.equalsLowercase(start, "stripe-signature") {
                field = .stripeSignature
            } else if Self.equalsLowercase(start, "paddle-signature") {
                field = .paddleSignature
            }
        case 17:
            if Self.equalsLowercase(start, "transfer-encoding") { return .transferEncoding }
        default:
            break
        }
        self.field = field
        var extra: UInt8 = 0
        if name.count == extraName0.count && Self.equalsExtra(start, extraName0) { extra |= 1 }
        if name.count == extraName1.count && Self.equalsExtra(start, extraName1) { extra |= 2 }
        extraMatch = extra
        return nil
    }

    /// At a value's CR: its syntax, for the fields that have one, and where it is.
    private mutating func endField(_ base: UnsafeRawPointer, value untrimmed: Range<Int>) -> HeadProblem? {
        var lower = untrimmed.lowerBound
        var upper = untrimmed.upperBound
        while lower < upper, Self.isOWS(base.load(fromByteOffset: lower, as: UInt8.self)) { lower &+= 1 }
        while upper > lower, Self.isOWS(base.load(fromByteOffset: upper &- 1, as: UInt8.self)) { upper &-= 1 }
        let value = lower..<upper
        switch field {
        case .other:
            break
        case .host:
            for index in value where !Self.isHostByte(base.load(fromByteOffset: index, as: UInt8.self)) { return .badHost }
            head.host = value
        case .contentLength:
            guard value.count > 0, value.count <= 18 else { return .invalidContentLength }
            var length = 0
            for index in value {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                guard Self.isDigit(byte) else { return .invalidContentLength }
                length = length &* 10 &+ Int(byte &- Self.zero)
            }
            head.contentLength = length
            contentLengthSeen = true
        case .connection:
            readConnectionTokens(base, value)
        case .userAgent: head.userAgent = value
        case .purpose: head.purpose = value
        case .secPurpose: head.secPurpose = value
        case .acceptLanguage: head.acceptLanguage = value
        case .authorization: head.authorization = value
        case .contentType: head.contentType = value
        case .stripeSignature: head.stripeSignature = value
        case .paddleSignature: head.paddleSignature = value
        case .expect:
            // `100-continue` is the only expectation HTTP/1.1 defines (RFC 9110 §10.1.1); others are ignored.
            if value.count == 12 && Self.equalsLowercase(base + value.lowerBound, "100-continue") { head.expectsContinue = true }
        }
        if extraMatch & 1 != 0 { head.extra0 = value }
        if extraMatch & 2 != 0 { head.extra1 = value }
        return nil
    }

    /// Connection is a comma-separated list of tokens (RFC 9110 §7.6.1); only `close` and `keep-alive`
    /// matter here. Anything else in it is ignored, as a list's unknown members are.
    private mutating func readConnectionTokens(_ base: UnsafeRawPointer, _ value: Range<Int>) {
        var start = value.lowerBound
        while start < value.upperBound {
            var end = start
            while end < value.upperBound, base.load(fromByteOffset: end, as: UInt8.self) != Self.comma { end &+= 1 }
            var lower = start
            var upper = end
            while lower < upper, Self.isOWS(base.load(fromByteOffset: lower, as: UInt8.self)) { lower &+= 1 }
            while upper > lower, Self.isOWS(base.load(fromByteOffset: upper &- 1, as: UInt8.self)) { upper &-= 1 }
            if upper &- lower == 5 && Self.equalsLowercase(base + lower, "close") {
                connectionClose = true
            } else if upper &- lower == 10 && Self.equalsLowercase(base + lower, "keep-alive") {
                connectionKeepAlive = true
            }
            start = end &+ 1
        }
    }

    // MARK: - Bytes

    private static let sp: UInt8 = 0x20
    private static let htab: UInt8 = 0x09
    private static let cr: UInt8 = 0x0D
    private static let lf: UInt8 = 0x0A
    private static let colon = UInt8(ascii: ":")
    private static let comma = UInt8(ascii: ",")
    private static let slash = UInt8(ascii: "/")
    private static let dot = UInt8(ascii: ".")
    private static let zero = UInt8(ascii: "0")
    private static let one = UInt8(ascii: "1")

    /// A problem in the request line at a byte that is not what belongs there: NUL and a bare LF first,
    /// then a CR (the line ends with a part missing), else `otherwise`.
    @inline(__always)
    private static func requestLineProblem(_ byte: UInt8, otherwise: HeadProblem) -> HeadProblem {
        byte == 0 ? .nulInHeader : byte == lf ? .bareLF : byte == cr ? .badRequestLine : otherwise
    }

    /// A problem in a header name at a byte that is not a token's (nor its colon): NUL, a bare LF, a line
    /// without a colon (CR), a space or control byte, or anything else.
    @inline(__always)
    private static func nameProblem(_ byte: UInt8) -> HeadProblem {
        switch byte {
        case 0: .nulInHeader
        case lf: .bareLF
        case cr, colon: .invalidHeaderName
        case 0x01...0x20, 0x7F: .controlCharacterInHeader
        default: .invalidHeaderName
        }
    }

    /// The byte `position` of `HTTP/`.
    @inline(__always)
    private static func httpSlash(_ position: Int) -> UInt8 {
        switch position {
        case 0: UInt8(ascii: "H")
        case 1, 2: UInt8(ascii: "T")
        case 3: UInt8(ascii: "P")
        default: slash
        }
    }

    /// The method whose bytes `word` holds (`GET` is 0x474554).
    @inline(__always)
    private static func method(_ word: UInt64) -> HTTPMethod? {
        switch word {
        case 0x47_45_54: .get
        case 0x48_45_41_44: .head
        case 0x50_4F_53_54: .post
        case 0x50_55_54: .put
        case 0x44_45_4C_45_54_45: .delete
        case 0x4F_50_54_49_4F_4E_53: .options
        case 0x54_52_41_43_45: .trace
        case 0x43_4F_4E_4E_45_43_54: .connect
        case 0x50_41_54_43_48: .patch
        default: nil
        }
    }

    /// Whether `byte` is in a 128-bit set given as two masks (bit n of `low` for byte n, of `high` for
    /// byte 64 + n); bytes from 0x80 up never are.
    @inline(__always)
    private static func isIn(_ byte: UInt8, low: UInt64, high: UInt64) -> Bool {
        if byte < 64 { return low >> UInt64(byte) & 1 != 0 }
        if byte < 128 { return high >> UInt64(byte &- 64) & 1 != 0 }
        return false
    }

    /// tchar (RFC 9110 §5.6.2): `!#$%&'*+-.^_`|~`, digits and letters. The hottest test (every name
    /// byte), so a table: one load, where two masks take three branches.
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        tokenTable.utf8Start[Int(byte)] == UInt8(ascii: "1")
    }

    /// One ASCII digit per byte value, `1` for tchar. A StaticString is constant data in the binary,
    /// where a global array would be initialized lazily and bounds-checked.
    @inline(__always)
    private static var tokenTable: StaticString {
        """
        0000000000000000000000000000000001011111001101101111111111000000\
        0111111111111111111111111110001111111111111111111111111111101010\
        0000000000000000000000000000000000000000000000000000000000000000\
        0000000000000000000000000000000000000000000000000000000000000000
        """
    }

    /// What a Host value may hold: a reg-name, an IP literal in brackets, a port (RFC 3986 §3.2.2's
    /// unreserved, sub-delims, `%`, `:`, `[`, `]`). No `/`, `@`, `?`, `#`, quote, backslash or space.
    /// Public for fuzz-head, which builds with LinkOutCore as a package product.
    @inline(__always)
    public static func isHostByte(_ byte: UInt8) -> Bool {
        isIn(byte, low: 0x2FFF_7FF2_0000_0000, high: 0x47FF_FFFE_AFFF_FFFE)
    }

    @inline(__always)
    private static func isTargetByte(_ byte: UInt8) -> Bool { byte &- 0x21 <= 0x7E - 0x21 }

    /// Where the path of the absolute-form target `from..<to` starts (its first `/` or `?` after the
    /// authority, or `to` when it has neither: an empty path, which no link has, as `/`), or nil unless it
    /// is `http://` or `https://` in any case, then an authority of host bytes (no user info: `@` is not
    /// one) whose host is not empty (RFC 9110 §4.2.1).
    private static func absoluteFormPath(_ base: UnsafeRawPointer, from: Int, to: Int) -> Int? {
        var index = from
        for expected in "http".utf8 {
            guard index < to, lowercased(base.load(fromByteOffset: index, as: UInt8.self)) == expected else { return nil }
            index &+= 1
        }
        if index < to, lowercased(base.load(fromByteOffset: index, as: UInt8.self)) == UInt8(ascii: "s") { index &+= 1 }
        for expected in "://".utf8 {
            guard index < to, base.load(fromByteOffset: index, as: UInt8.self) == expected else { return nil }
            index &+= 1
        }
        let authority = index
        while index < to {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            if byte == slash || byte == UInt8(ascii: "?") { break }
            guard isHostByte(byte) else { return nil }
            index &+= 1
        }
        guard index > authority, base.load(fromByteOffset: authority, as: UInt8.self) != colon else { return nil }
        return index
    }

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool { byte &- zero <= 9 }

    @inline(__always)
    private static func isOWS(_ byte: UInt8) -> Bool { byte == sp || byte == htab }

    @inline(__always)
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }

    /// Whether the bytes at `start` spell `lowercase` in any case, for names known to be tokens of the
    /// same length. `| 0x20` lowers a letter; no other token byte becomes a letter or `-` by it.
    @inline(__always)
    private static func equalsLowercase(_ start: UnsafeRawPointer, _ lowercase: StaticString) -> Bool {
        let expected = lowercase.utf8Start
        for index in 0..<lowercase.utf8CodeUnitCount
        where start.load(fromByteOffset: index, as: UInt8.self) | 0x20 != expected[index] {
            return false
        }
        return true
    }

    /// Whether the token bytes at `start` are a configured extra name (lower case, of the same length).
    @inline(__always)
    private static func equalsExtra(_ start: UnsafeRawPointer, _ name: [UInt8]) -> Bool {
        name.withUnsafeBufferPointer { expected in
            for index in 0..<expected.count where lowercased(start.load(fromByteOffset: index, as: UInt8.self)) != expected[index] {
                return false
            }
            return true
        }
    }

    // Eight bytes at a time. Each test below is exact for every byte on its own (no carry crosses from
    // one byte into the next: the low seven bits plus at most 0x60 stay below 0x100), so the lowest set
    // bit, in little-endian order, is the first byte that stops the run.
    private static let lowSevenBits: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
    private static let topBits: UInt64 = 0x8080_8080_8080_8080

    /// The first index from `from` (before `to`) whose byte is not 0x21...0x7E, or `to`.
    @inline(__always)
    private static func skipTargetBytes(_ base: UnsafeRawPointer, from: Int, to: Int) -> Int {
        var index = from
        while index &+ 8 <= to {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let low = word & lowSevenBits
            // Stops at a byte with its top bit set, low bits below 0x21 (adding 0x5F does not reach
            // 0x80), or low bits 0x7F (adding 1 does).
            let stops = (word | ~(low &+ 0x5F5F_5F5F_5F5F_5F5F) | (low &+ 0x0101_0101_0101_0101)) & topBits
            if stops != 0 { return index &+ stops.trailingZeroBitCount &>> 3 }
            index &+= 8
        }
        while index < to, isTargetByte(base.load(fromByteOffset: index, as: UInt8.self)) { index &+= 1 }
        return index
    }

    /// The first index from `from` (before `to`) whose byte is a control byte (HTAB included) or DEL, or
    /// `to`: field-vchar and SP run on.
    @inline(__always)
    private static func skipFieldValueBytes(_ base: UnsafeRawPointer, from: Int, to: Int) -> Int {
        var index = from
        while index &+ 8 <= to {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let low = word & lowSevenBits
            // Stops at a byte with its top bit clear and low bits below 0x20 (adding 0x60 does not reach
            // 0x80) or 0x7F (adding 1 does). Bytes from 0x80 up (obs-text) run on.
            let stops = ~word & (~(low &+ 0x6060_6060_6060_6060) | (low &+ 0x0101_0101_0101_0101)) & topBits
            if stops != 0 { return index &+ stops.trailingZeroBitCount &>> 3 }
            index &+= 8
        }
        while index < to {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            if byte < sp || byte == 0x7F { break }
            index &+= 1
        }
        return index
    }
}
