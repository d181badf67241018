import Testing

@testable import LinkOutCore

@Suite("request head parser")
struct RequestHeadParserTests {
    typealias Outcome = RequestHeadParser.Outcome

    /// Parses `bytes` in one call; then, for heads up to `everySplitUpTo` bytes, split at every point
    /// (two calls) and byte by byte (one call per byte received); for longer ones at a few points. Every
    /// way must give the same outcome, ranges included. Records an issue and returns the one-call outcome.
    static func parse(_ bytes: [UInt8], _ configured: RequestHeadParser = RequestHeadParser(), everySplitUpTo: Int = 1_200) -> Outcome {
        var whole = configured
        let expected = bytes.withUnsafeBytes { whole.parse($0) }
        #expect(bytes.withUnsafeBytes { whole.parse($0) } == expected, "a second call answers the same")
        let splits = bytes.count <= everySplitUpTo ? Array(0...bytes.count) : [0, 1, 7, bytes.count / 3, bytes.count / 2, bytes.count - 1]
        for split in splits {
            var parser = configured
            var outcome = bytes[..<split].withUnsafeBytes { parser.parse($0) }
            if outcome == .incomplete { outcome = bytes.withUnsafeBytes { parser.parse($0) } }
            if outcome != expected {
                Issue.record("split at \(split): \(outcome), whole: \(expected)")
                return expected
            }
        }
        if bytes.count <= everySplitUpTo {
            var parser = configured
            var outcome = Outcome.incomplete
            // Including the empty buffer, which must change nothing.
            for received in 0...bytes.count where outcome == .incomplete {
                outcome = bytes[..<received].withUnsafeBytes { parser.parse($0) }
            }
            if outcome != expected { Issue.record("byte by byte: \(outcome), whole: \(expected)") }
        }
        return expected
    }

    static func parse(_ text: String, _ configured: RequestHeadParser = RequestHeadParser()) -> Outcome {
        parse(Array(text.utf8), configured)
    }

    /// The problem, or nil when the head is accepted or incomplete.
    static func problem(_ bytes: [UInt8], _ configured: RequestHeadParser = RequestHeadParser()) -> HeadProblem? {
        if case .refused(let problem) = parse(bytes, configured) { return problem }
        return nil
    }

    static func problem(_ text: String, _ configured: RequestHeadParser = RequestHeadParser()) -> HeadProblem? {
        problem(Array(text.utf8), configured)
    }

    static func head(_ bytes: [UInt8], _ configured: RequestHeadParser = RequestHeadParser()) -> RequestHead? {
        let outcome = parse(bytes, configured)
        guard case .head(let head) = outcome else {
            Issue.record("not a head: \(outcome)")
            return nil
        }
        return head
    }

    static func head(_ text: String, _ configured: RequestHeadParser = RequestHeadParser()) -> RequestHead? {
        head(Array(text.utf8), configured)
    }

    /// The text a range of `bytes` holds.
    static func text(_ bytes: [UInt8], _ range: Range<Int>?) -> String? {
        range.map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    /// Text and bytes, joined (array literals of bytes come as `[Int]`).
    static func bytes(_ parts: Any...) -> [UInt8] {
        parts.flatMap { part -> [UInt8] in
            switch part {
            case let text as String: Array(text.utf8)
            case let byte as UInt8: [byte]
            case let bytes as [UInt8]: bytes
            case let bytes as [Int]: bytes.map { UInt8($0) }
            default: fatalError("\(part)")
            }
        }
    }

    static let safari = """
        GET /nl?externalPurchaseToken=eyJhcHBBcHBsZUlkIjoxMjM0NTY3ODkwLCJidW5kbGVJZCI6ImNvbS5leGFtcGxlIn0&bundleId=com.example HTTP/1.1\r
        Host: links.example.com\r
        Sec-Fetch-Dest: document\r
        User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1\r
        Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r
        Sec-Fetch-Site: none\r
        Sec-Fetch-Mode: navigate\r
        Accept-Language: en-GB,en;q=0.9\r
        Priority: u=0, i\r
        Accept-Encoding: gzip, deflate, br\r
        Sec-Purpose: prefetch\r
        Connection: keep-alive\r
        \r

        """

    // MARK: - Accepted heads

    @Test func aSafariHeadGivesItsRanges() throws {
        let bytes = Array(Self.safari.utf8)
        let head = try #require(Self.head(bytes))
        #expect(head.method == .get)
        #expect(
            Self.text(bytes, head.target)
                == "/nl?externalPurchaseToken=eyJhcHBBcHBsZUlkIjoxMjM0NTY3ODkwLCJidW5kbGVJZCI6ImNvbS5leGFtcGxlIn0&bundleId=com.example")
        #expect(head.minorVersion == 1)
        #expect(head.keepAlive)
        #expect(head.contentLength == 0)
        #expect(head.headLength == bytes.count)
        #expect(Self.text(bytes, head.host) == "links.example.com")
        #expect(
            Self.text(bytes, head.userAgent)
                == "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
        )
        #expect(Self.text(bytes, head.acceptLanguage) == "en-GB,en;q=0.9")
        #expect(Self.text(bytes, head.secPurpose) == "prefetch")
        #expect(head.purpose == nil && head.authorization == nil && head.contentType == nil)
        #expect(head.extra0 == nil && head.extra1 == nil)
    }

    /// The head is copied several times per request: it stays small enough (128 bytes) to be copied by
    /// register moves rather than memcpy, and a range set, cleared and absent reads back as it was set.
    @Test func theHeadStaysCompactAndItsRangesReadBackAsSet() {
        #expect(MemoryLayout<RequestHead>.size <= 128, "\(MemoryLayout<RequestHead>.size) bytes")
        var head = RequestHead()
        #expect(head.userAgent == nil && head.target == 0..<0 && head.minorVersion == 1 && head.keepAlive)
        head.userAgent = 17..<17
        head.target = 4..<9_000
        head.extra1 = 100..<130
        #expect(head.userAgent == 17..<17, "an empty value is present, not absent")
        #expect(head.target == 4..<9_000 && head.extra1 == 100..<130 && head.extra0 == nil)
        head.userAgent = nil
        #expect(head.userAgent == nil)
        head.minorVersion = 0
        #expect(head.minorVersion == 0)
    }

    @Test func everyKnownMethod() {
        for method in HTTPMethod.allCases {
            let target = method == .connect ? "/" : "/x"
            #expect(Self.head("\(method.name) \(target) HTTP/1.1\r\nHost: x\r\n\r\n")?.method == method, "\(method.name)")
        }
    }

    @Test func valuesAreTrimmedAndMayHoldTabsAndObsText() throws {
        let bytes = Self.bytes(
            "GET / HTTP/1.1\r\nHost:x\r\nUser-Agent: \t a\tb  c \t\r\nPurpose:\r\nAuthorization:   \r\nContent-Type: t/",
            [0xC3, 0xA9, 0xFF, 0x80], "\r\n\r\n")
        let head = try #require(Self.head(bytes))
        #expect(Self.text(bytes, head.host) == "x")
        #expect(Self.text(bytes, head.userAgent) == "a\tb  c")
        #expect(head.purpose?.isEmpty == true, "present and empty")
        #expect(head.authorization?.isEmpty == true)
        #expect(head.contentType.map { Array(bytes[$0]) } == Array("t/".utf8) + [0xC3, 0xA9, 0xFF, 0x80])
    }

    @Test func headerNamesMatchInAnyCase() throws {
        let bytes = Array(
            "GET / HTTP/1.1\r\nhOST: h\r\nuser-agent: u\r\nPURPOSE: p\r\nsec-PURPOSE: s\r\naccept-language: a\r\nAUTHORIZATION: z\r\ncontent-type: c\r\nCONNECTION: CLOSE\r\ncontent-LENGTH: 7\r\n\r\n"
                .utf8)
        let head = try #require(Self.head(bytes))
        #expect(
            [head.host, head.userAgent, head.purpose, head.secPurpose, head.acceptLanguage, head.authorization, head.contentType].map {
                Self.text(bytes, $0)
            } == ["h", "u", "p", "s", "a", "z", "c"])
        #expect(!head.keepAlive)
        #expect(head.contentLength == 7)
        // Same length, other names: skipped, not matched.
        let lookalikes = try #require(
            Self.head(
                "GET / HTTP/1.1\r\nHost: x\r\nHosT-: a\r\nX-Agent-A: b\r\nContent-Typf: c\r\nTransfer-Encodinh: d\r\nContent-Lengti: e\r\n\r\n"
            ))
        #expect(lookalikes.userAgent == nil && lookalikes.contentType == nil && lookalikes.contentLength == 0)
    }

    @Test func contentLength() {
        #expect(Self.head("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 42\r\n\r\n")?.contentLength == 42)
        #expect(Self.head("POST / HTTP/1.1\r\nHost: x\r\nContent-Length:  007 \r\n\r\n")?.contentLength == 7)
        #expect(Self.head("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")?.contentLength == 0)
        #expect(
            Self.head("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999999999\r\n\r\n")?.contentLength == 999_999_999_999_999_999)
        for bad in ["", " ", "-1", "+1", "1 2", "1,1", "1, 1", "abc", "0x1", "1.0", "1e3", "1234567890123456789", "٣"] {
            #expect(Self.problem("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \(bad)\r\n\r\n") == .invalidContentLength, "\(bad)")
        }
        #expect(Self.problem("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n") == .duplicateContentLength)
        #expect(Self.problem("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\ncontent-length: 6\r\n\r\n") == .duplicateContentLength)
        // Which the route may refuse: the parser gives the length of a HEAD's or TRACE's body, and no more.
        let body = "GET /nl HTTP/1.1\r\nHost: x\r\n\r\n"
        let smuggling = Array("HEAD / HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
        let head = Self.head(smuggling)
        #expect(head?.contentLength == body.utf8.count)
        #expect(head?.headLength == smuggling.count - body.utf8.count)
    }

    @Test func keepAlive() {
        let cases: [(String, Bool)] = [
            ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", true),
            ("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", false),
            ("HEAD / HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: x\r\nConnection: Keep-Alive, CLOSE\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade ,\tclose ,\r\n\r\n", false),
            ("GET / HTTP/1.1\r\nHost: x\r\nConnection: closed, enclose, close-ish\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: x\r\nConnection: x\r\nConnection: close\r\n\r\n", false),
            ("GET / HTTP/1.0\r\n\r\n", false),
            ("HEAD / HTTP/1.0\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true),
            ("HEAD / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
            ("GET / HTTP/1.0\r\nConnection: , keep-alive,\r\n\r\n", true),
            ("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: close\r\nConnection: keep-alive\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: keep-alives\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nKeep-Alive: timeout=5\r\n\r\n", false),
        ]
        for (text, keepAlive) in cases {
            #expect(Self.head(text)?.keepAlive == keepAlive, "\(text)")
        }
        #expect(Self.head("GET / HTTP/1.0\r\n\r\n")?.minorVersion == 0)
    }

    @Test func hostSyntax() {
        for good in [
            "x", "", "links.example.com", "links.example.com:443", "[::1]:8080", "[v1.fe80::a+en1]", "a_b~c%41!$&'()*+,;=", "127.0.0.1",
        ] {
            #expect(Self.head("GET / HTTP/1.1\r\nHost: \(good)\r\n\r\n")?.host?.count == good.utf8.count, "\(good)")
        }
        for bad in ["a/b", "user@evil.example", "a b", "a\tb", "\"x\"", "x?y", "x#y", "a\\b", "<x>", "x^", "x`", "x{y}", "x|y"] {
            #expect(Self.problem("GET / HTTP/1.1\r\nHost: \(bad)\r\n\r\n") == .badHost, "\(bad)")
        }
        #expect(Self.problem(Self.bytes("GET / HTTP/1.1\r\nHost: x", [0xC3, 0xA9], "\r\n\r\n")) == .badHost)
        #expect(Self.problem("GET / HTTP/1.1\r\nHost: bad/\r\nHost: x\r\n\r\n") == .badHost, "the first problem wins")
    }

    @Test func hostIsRequiredFromHTTP11AndOnlyOnce() {
        #expect(Self.problem("GET / HTTP/1.1\r\n\r\n") == .missingHost)
        #expect(Self.problem("GET / HTTP/1.1\r\nX-Host: x\r\nHosts: x\r\n\r\n") == .missingHost)
        #expect(Self.head("GET / HTTP/1.0\r\n\r\n")?.host == nil)
        #expect(Self.problem("GET / HTTP/1.1\r\nHost: x\r\nHOST: x\r\n\r\n") == .duplicateHost)
        #expect(Self.problem("GET / HTTP/1.0\r\nHost: x\r\nhost: y\r\n\r\n") == .duplicateHost)
        #expect(Self.problem("GET / HTTP/1.1\r\nHost:\r\nHost: x\r\n\r\n") == .duplicateHost, "an empty Host is still one")
        // Found at the second name's colon, before the value or the head's end.
        #expect(Self.parse("GET / HTTP/1.1\r\nHost: x\r\nHost:") == .refused(.duplicateHost))
        #expect(Self.parse("GET / HTTP/1.1\r\nHost: x\r\nHost: a\u{1}\r\n") == .refused(.duplicateHost))
    }

    @Test func singleValueHeadersOnlyOnceListsAnyNumberOfTimes() throws {
        for name in ["Authorization", "Content-Type", "User-Agent", "Purpose", "Sec-Purpose"] {
            #expect(
                Self.problem("GET / HTTP/1.1\r\nHost: x\r\n\(name): a\r\n\(name.uppercased()): a\r\n\r\n") == .duplicateHeader, "\(name)")
        }
        let bytes = Array("GET / HTTP/1.1\r\nHost: x\r\nAccept-Language: de\r\nAccept: */*\r\naccept-language: fr, en\r\n\r\n".utf8)
        let head = try #require(Self.head(bytes))
        #expect(Self.text(bytes, head.acceptLanguage) == "fr, en", "the last one")
    }

    @Test func transferEncodingOfAnyKind() {
        for value in ["chunked", "identity", "gzip, chunked", "", "x"] {
            #expect(Self.problem("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \(value)\r\n\r\n") == .transferEncoding, "\(value)")
        }
        #expect(Self.problem("POST / HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\nContent-Length: 5\r\n\r\n") == .transferEncoding)
        #expect(Self.problem("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTRANSFER-ENCODING: chunked\r\n\r\n") == .transferEncoding)
        #expect(Self.problem("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n") == .transferEncoding)
        // At the colon: certain before the value.
        #expect(Self.parse("GET / HTTP/1.1\r\nTransfer-Encoding:") == .refused(.transferEncoding))
    }

    @Test func extraHeaders() throws {
        let parser = RequestHeadParser(extraHeaders: ["X-Forwarded-For", "cf-ipcountry"])
        let bytes = Array(
            "GET / HTTP/1.1\r\nHost: x\r\nx-forwarded-for: 1.1.1.1\r\nCF-IPCountry: NL\r\nX-FORWARDED-FOR:  2.2.2.2, 3.3.3.3 \r\nX-Forwarded-Fo: no\r\n\r\n"
                .utf8)
        let head = try #require(Self.head(bytes, parser))
        #expect(Self.text(bytes, head.extra0) == "2.2.2.2, 3.3.3.3", "the last one")
        #expect(Self.text(bytes, head.extra1) == "NL")
        // Absent: nil.
        #expect(Self.head("GET / HTTP/1.1\r\nHost: x\r\n\r\n", parser)?.extra0 == nil)
        // One extra only; and one naming a header the parser reads itself gets its value too.
        let one = try #require(Self.head(bytes, RequestHeadParser(extraHeaders: ["Cf-IpCountry"])))
        #expect(Self.text(bytes, one.extra0) == "NL" && one.extra1 == nil)
        let both = try #require(Self.head(bytes, RequestHeadParser(extraHeaders: ["host", "x-forwarded-for"])))
        #expect(Self.text(bytes, both.extra0) == "x" && Self.text(bytes, both.host) == "x")
        // Names differing only where `| 0x20` would confuse a non-letter ('^' and '~') do not match.
        let tilde = try #require(
            Self.head("GET / HTTP/1.1\r\nHost: x\r\nX^A: 1\r\nX~A: 2\r\n\r\n", RequestHeadParser(extraHeaders: ["x~a"])))
        #expect(Self.text(Array("GET / HTTP/1.1\r\nHost: x\r\nX^A: 1\r\nX~A: 2\r\n\r\n".utf8), tilde.extra0) == "2")
    }

    // MARK: - The request line

    @Test func requestLine() {
        let cases: [(String, HeadProblem)] = [
            ("\r\n\r\n", .badRequestLine),
            ("\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", .badRequestLine),
            (" GET / HTTP/1.1\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET\r\n\r\n", .badRequestLine),
            ("GET \r\n\r\n", .badRequestLine),
            ("GET /x\r\n\r\n", .badRequestLine),
            ("GET /x \r\n\r\n", .badRequestLine),
            ("GET /x HTTP/1.1 \r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET /x  HTTP/1.1\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET /x HTTP/1.x\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET /x http/1.1\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET /x HTTP/11\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET /x HTTP/1.10\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET /x HTTP/1.\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET /x HTTP/\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET /x HTTP/1.1x\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET\t/x HTTP/1.1\r\nHost: x\r\n\r\n", .badRequestLine),
            ("G(T /x HTTP/1.1\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET/x HTTP/1.1\r\nHost: x\r\n\r\n", .badRequestLine),
            ("GET /x HTTP/2.0\r\nHost: x\r\n\r\n", .unsupportedVersion),
            ("GET /x HTTP/1.2\r\nHost: x\r\n\r\n", .unsupportedVersion),
            ("GET /x HTTP/0.9\r\nHost: x\r\n\r\n", .unsupportedVersion),
            ("GET /x HTTP/3.1\r\n", .unsupportedVersion),
            ("GET /x HTTP/9.9x", .unsupportedVersion),
            ("BREW /x HTTP/1.1\r\nHost: x\r\n\r\n", .unknownMethod),
            ("get /x HTTP/1.1\r\nHost: x\r\n\r\n", .unknownMethod),
            ("Get /x HTTP/1.1\r\nHost: x\r\n\r\n", .unknownMethod),
            ("GETS /x HTTP/1.1\r\nHost: x\r\n\r\n", .unknownMethod),
            ("PROPFIND /x HTTP/1.1\r\nHost: x\r\n\r\n", .unknownMethod),
            ("BREW * HTTP/1.1\r\nHost: x\r\n\r\n", .unknownMethod),
            ("GET * HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET ftp://evil.example/nl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET http://user@evil.example/nl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET http:///nl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET http://:80/nl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET http:/evil.example/nl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET httpx://evil.example/nl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET http://evil\"example/nl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET http://evil.example#x HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n", .unsupportedTargetForm),
            ("GET nl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET %2Fnl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET  /nl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET \t/nl HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            ("GET /nl\t?x HTTP/1.1\r\nHost: x\r\n\r\n", .invalidTarget),
            ("GET /nl?x=é HTTP/1.1\r\nHost: x\r\n\r\n", .invalidTarget),
            ("GET /nl\u{7F} HTTP/1.1\r\nHost: x\r\n\r\n", .invalidTarget),
            ("GET /nl\u{1} HTTP/1.1\r\nHost: x\r\n\r\n", .invalidTarget),
        ]
        for (text, expected) in cases {
            #expect(Self.problem(text) == expected, "\(text.debugDescription)")
        }
        #expect(Self.problem(Self.bytes("GET /nl?x=", [0xFF, 0xFE], " HTTP/1.1\r\nHost: x\r\n\r\n")) == .invalidTarget)
    }

    /// Certain before the head ends: answered at once, not after the client sends more.
    @Test func requestLineProblemsAreReportedAsSoonAsCertain() {
        #expect(Self.parse("GETTINGS") == .refused(.unknownMethod), "no known method has eight bytes")
        #expect(Self.parse("CONNECTX") == .refused(.unknownMethod))
        #expect(Self.parse("CONNECT") == .incomplete)
        #expect(Self.parse("BREW ") == .refused(.unknownMethod))
        #expect(Self.parse("GET *") == .refused(.unsupportedTargetForm))
        #expect(Self.parse("GET /x HTTP/2.0") == .refused(.unsupportedVersion))
        #expect(Self.parse("GET /x HTTP/1.1") == .incomplete)
        #expect(Self.parse("GET /x HTTP/1.1\r") == .incomplete)
        #expect(Self.parse("GET /x\r") == .refused(.badRequestLine))
        #expect(Self.parse("GET / HTTP/1.1\r\nHost: x\r\n\r") == .incomplete)
    }

    /// RFC 9112 §3.2.2: absolute-form is accepted; its path and query are the target (an empty path stays
    /// empty: no link's, answered as `/` is), its authority checked and set aside like Host.
    @Test func absoluteFormTargetsGiveTheirPathAndQuery() {
        let cases: [(String, String)] = [
            ("http://evil.example/nl?externalPurchaseToken=abc", "/nl?externalPurchaseToken=abc"),
            ("HTTPS://Shop.Example:8443/nl", "/nl"),
            ("http://[::1]:8080/a/b?c", "/a/b?c"),
            ("http://a.example?x=1", "?x=1"),
            ("http://a.example", ""),
            ("https://a.example//evil.example/nl", "//evil.example/nl"),
        ]
        for (target, path) in cases {
            let bytes = Array("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            guard let head = Self.head(bytes) else {
                Issue.record("\(target): \(Self.parse(bytes))")
                continue
            }
            #expect(Self.text(bytes, head.target) == path, "\(target)")
            #expect(head.headLength == bytes.count)
        }
        // The version is read after the whole target, and the limit counts the target as sent.
        #expect(Self.problem("GET http://a.example/nl HTTP/2.0\r\nHost: x\r\n\r\n") == .unsupportedVersion)
        let small = RequestHeadParser(maxTargetBytes: 20)
        #expect(Self.problem("GET http://a.example/nl?abcdefgh HTTP/1.1\r\nHost: x\r\n\r\n", small) == .targetTooLong)
        // Not absolute-form is certain at its first byte; a bad absolute-form at the space after it.
        #expect(Self.parse("GET *") == .refused(.unsupportedTargetForm))
        #expect(Self.parse("GET ftp://a.example/nl") == .incomplete)
        #expect(Self.parse("GET ftp://a.example/nl ") == .refused(.unsupportedTargetForm))
    }

    @Test func targetLength() {
        let atLimit = "/" + String(repeating: "a", count: RequestHeadParser.defaultMaxTargetBytes - 1)
        #expect(Self.head("GET \(atLimit) HTTP/1.1\r\nHost: x\r\n\r\n")?.target.count == RequestHeadParser.defaultMaxTargetBytes)
        #expect(Self.problem("GET \(atLimit)a HTTP/1.1\r\nHost: x\r\n\r\n") == .targetTooLong)
        #expect(Self.parse("GET \(atLimit)a") == .refused(.targetTooLong), "at the first byte too many")
        #expect(Self.parse("GET \(atLimit)") == .incomplete)
        #expect(Self.problem("GET /nl?\(String(repeating: "a", count: 20_000)) HTTP/1.1\r\nHost: x\r\n\r\n") == .targetTooLong)
        // A smaller limit, at every split.
        let small = RequestHeadParser(maxTargetBytes: 4)
        #expect(Self.head("GET /abc HTTP/1.1\r\nHost: x\r\n\r\n", small)?.target == 4..<8)
        #expect(Self.problem("GET /abcd HTTP/1.1\r\nHost: x\r\n\r\n", small) == .targetTooLong)
        // A bad byte where the limit is passed is the bad byte; a space there ends a target at the limit.
        #expect(Self.problem("GET /abc\t HTTP/1.1\r\nHost: x\r\n\r\n", small) == .invalidTarget)
        #expect(Self.problem("GET /abc\r\n", small) == .badRequestLine)
    }

    // MARK: - Lines

    @Test func lineEndings() {
        let cases: [([UInt8], HeadProblem)] = [
            (Self.bytes("GET / HTTP/1.1\nHost: x\n\n"), .bareLF),
            (Self.bytes("GET / HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n"), .bareLF),
            (Self.bytes("GET / HTTP/1.1\r\nHost: x\r\n\n"), .bareLF),
            (Self.bytes("GET / HTTP/1.1\r\nHost: x\n\r\n"), .bareLF),
            (Self.bytes("GET /\nHost: x\r\n\r\n"), .bareLF),
            (Self.bytes("GET\n"), .bareLF),
            (Self.bytes("\n"), .bareLF),
            (Self.bytes("GET / HTTP/1.1\r\nHost\n"), .bareLF),
            (Self.bytes("GET / HTTP/1.1\r\nHost: x\rX\n\r\n"), .bareCR),
            (Self.bytes("GET / HTTP/1.1\rHost: x\r\n\r\n"), .bareCR),
            (Self.bytes("GET / HTTP/1.1\r\r\n"), .bareCR),
            (Self.bytes("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n"), .bareCR),
            (Self.bytes("GET / HTTP/1.1\r\nX: a\r\r\n\r\n"), .bareCR),
            (Self.bytes("GET / HTTP/1.1\r\nHost: x\r\n\rX"), .bareCR),
            (Self.bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\r\n"), .bareCR),
            // NUL wherever it is: method, target, version, line start, name, value, after each kind of CR.
            (Self.bytes([UInt8(0)], "GET / HTTP/1.1\r\n\r\n"), .nulInHeader),
            (Self.bytes("GE", UInt8(0), "T / HTTP/1.1\r\n\r\n"), .nulInHeader),
            (Self.bytes("GET ", UInt8(0), "/ HTTP/1.1\r\n\r\n"), .nulInHeader),
            (Self.bytes("GET /a", UInt8(0), " HTTP/1.1\r\n\r\n"), .nulInHeader),
            (Self.bytes("GET /a HT", UInt8(0), "TP/1.1\r\n\r\n"), .nulInHeader),
            (Self.bytes("GET /nl HTTP/1.1", UInt8(0), "junk\r\nHost: x\r\n\r\n"), .nulInHeader),
            (Self.bytes("GET / HTTP/1.1\r", UInt8(0), "\n\r\n"), .nulInHeader),
            (Self.bytes("GET / HTTP/1.1\r\n", UInt8(0), "X: a\r\n\r\n"), .nulInHeader),
            (Self.bytes("GET / HTTP/1.1\r\nX", UInt8(0), ": a\r\n\r\n"), .nulInHeader),
            (Self.bytes("GET / HTTP/1.1\r\nX-A: ", UInt8(0), "\r\n\r\n"), .nulInHeader),
            (Self.bytes("GET / HTTP/1.1\r\nHost: x", UInt8(0), ".evil.example\r\n\r\n"), .nulInHeader),
            (Self.bytes("GET / HTTP/1.1\r\nX: a\r", UInt8(0), "\n\r\n"), .nulInHeader),
            (Self.bytes("GET / HTTP/1.1\r\nHost: x\r\n\r", UInt8(0), "\n"), .nulInHeader),
        ]
        for (bytes, expected) in cases {
            #expect(Self.problem(bytes) == expected, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
    }

    @Test func headerLines() {
        let cases: [(String, HeadProblem)] = [
            ("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n", .obsFold),
            ("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb\r\n\r\n", .obsFold),
            ("GET / HTTP/1.1\r\nX-A: a\r\n Transfer-Encoding: chunked\r\n\r\n", .obsFold),
            ("GET / HTTP/1.1\r\n Host: x\r\n\r\n", .obsFold),
            ("GET / HTTP/1.1\r\nHost: x\r\nX A: b\r\n\r\n", .controlCharacterInHeader),
            ("GET / HTTP/1.1\r\nHost : x\r\n\r\n", .controlCharacterInHeader),
            ("GET / HTTP/1.1\r\nHost\t: x\r\n\r\n", .controlCharacterInHeader),
            ("GET / HTTP/1.1\r\nX-\u{1}: b\r\n\r\n", .controlCharacterInHeader),
            ("GET / HTTP/1.1\r\nX-\u{7F}: b\r\n\r\n", .controlCharacterInHeader),
            ("GET / HTTP/1.1\r\n\u{1}X: b\r\n\r\n", .controlCharacterInHeader),
            ("GET / HTTP/1.1\r\nHost: x\r\nGarbage\r\n\r\n", .invalidHeaderName),
            ("GET / HTTP/1.1\r\nHost: x\r\n: b\r\n\r\n", .invalidHeaderName),
            ("GET / HTTP/1.1\r\nX(A): b\r\n\r\n", .invalidHeaderName),
            ("GET / HTTP/1.1\r\nX-é: b\r\n\r\n", .invalidHeaderName),
            ("GET / HTTP/1.1\r\n\"X\": b\r\n\r\n", .invalidHeaderName),
            ("GET / HTTP/1.1\r\nX/Y: b\r\n\r\n", .invalidHeaderName),
            ("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{1}b\r\n\r\n", .controlCharacterInHeader),
            ("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{7F}b\r\n\r\n", .controlCharacterInHeader),
            ("GET / HTTP/1.1\r\nHost: x\r\nX-A: \u{1B}[31m\r\n\r\n", .controlCharacterInHeader),
            ("GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{0B}\r\n\r\n", .controlCharacterInHeader),
        ]
        for (text, expected) in cases {
            #expect(Self.problem(text) == expected, "\(text.debugDescription)")
        }
    }

    @Test func headLimits() {
        // A head of exactly the limit is accepted; one byte more is not, though it is complete.
        let base = "GET / HTTP/1.1\r\nHost: x\r\nX: \r\n\r\n"
        let filler = String(repeating: "a", count: RequestHeadParser.defaultMaxHeadBytes - base.utf8.count)
        let atLimit = "GET / HTTP/1.1\r\nHost: x\r\nX: \(filler)\r\n\r\n"
        #expect(atLimit.utf8.count == RequestHeadParser.defaultMaxHeadBytes)
        #expect(Self.head(Array(atLimit.utf8))?.headLength == RequestHeadParser.defaultMaxHeadBytes)
        #expect(Self.problem("GET / HTTP/1.1\r\nHost: x\r\nX: a\(filler)\r\n\r\n") == .headTooLarge)
        // Refused once more bytes than the limit are in, without waiting for the end.
        let headerLinesOnly = Array(atLimit.utf8.dropLast(2))
        #expect(Self.parse(headerLinesOnly) == .incomplete)
        #expect(Self.parse(headerLinesOnly + Array("X: a".utf8)) == .refused(.headTooLarge))
        #expect(Self.problem("GET / HTTP/1.1\r\nHost: x\r\nX-A: \(String(repeating: "a", count: 20_000))\r\n\r\n") == .headTooLarge)
        // The first problem still wins when it is before the limit.
        #expect(
            Self.problem("GET / HTTP/1.1\r\nHost: x\r\nX-A: \u{1}\(String(repeating: "a", count: 20_000))\r\n\r\n")
                == .controlCharacterInHeader)
        // A smaller limit.
        let small = RequestHeadParser(maxHeadBytes: 28)
        #expect(Self.head("GET / HTTP/1.1\r\nHost: xy\r\n\r\n", small)?.headLength == 28)
        #expect(Self.problem("GET / HTTP/1.1\r\nHost: xyz\r\n\r\n", small) == .headTooLarge)
    }

    @Test func headerLineLimit() {
        func head(lines: Int) -> String { "GET / HTTP/1.1\r\nHost: x\r\n" + (1..<lines).map { "X-\($0): v\r\n" }.joined() + "\r\n" }
        #expect(Self.head(head(lines: 100)) != nil)
        #expect(Self.problem(head(lines: 101)) == .headTooLarge)
        #expect(Self.problem(head(lines: 3_000)) == .headTooLarge)
        #expect(Self.problem("GET / HTTP/1.1\r\nHost: x\r\nX: 1\r\nY: 2\r\n\r\n", RequestHeadParser(maxHeaderLines: 2)) == .headTooLarge)
        #expect(Self.head("GET / HTTP/1.0\r\n\r\n", RequestHeadParser(maxHeaderLines: 0)) != nil)
    }

    // MARK: - Calls

    @Test func everySplitOfSeveralHeads() {
        // Each parse() call above already compares every split and byte by byte; these are the heads
        // with the most state to carry across a split.
        for text in [
            Self.safari,
            "HEAD /nl HTTP/1.0\r\nConnection: Keep-Alive\r\nHost:  [::1]:80  \r\nContent-Length: 0012\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\nAccept-Language: a\r\nAccept-Language: b\r\nX-Forwarded-For: 1\r\n\r\n",
        ] {
            if case .head = Self.parse(text, RequestHeadParser(extraHeaders: ["x-forwarded-for"])) {} else { Issue.record("\(text)") }
        }
    }

    @Test func pipelinedHeads() throws {
        let first = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
        let second = "HEAD /bb HTTP/1.1\r\nHost: y\r\nConnection: close\r\n\r\n"
        let third = "POST /c HTTP/1.1\r\nHost: z\r\nContent-Length: 3\r\n\r\nabc"
        let fourth = "GET /d HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n"
        let all = Array((first + second + third + fourth).utf8)
        var parser = RequestHeadParser()
        var start = 0
        var seen: [String] = []
        while start < all.count {
            let outcome = all[start...].withUnsafeBytes { parser.parse($0) }
            guard case .head(let head) = outcome else {
                #expect(outcome == .refused(.obsFold))
                break
            }
            seen.append(String(decoding: all[start...].dropFirst(head.target.lowerBound).prefix(head.target.count), as: UTF8.self))
            start += head.headLength + head.contentLength
            parser.reset()
        }
        #expect(seen == ["/a", "/bb", "/c"])
        // A reset parser keeps its configuration.
        var configured = RequestHeadParser(extraHeaders: ["x-a"], maxTargetBytes: 2)
        _ = Array("GET / HTTP/1.0\r\n\r\n".utf8).withUnsafeBytes { configured.parse($0) }
        configured.reset()
        #expect(Array("GET /ab HTTP/1.0\r\n\r\n".utf8).withUnsafeBytes { configured.parse($0) } == .refused(.targetTooLong))
        configured.reset()
        let bytes = Array("GET / HTTP/1.0\r\nX-A: v\r\n\r\n".utf8)
        guard case .head(let head) = bytes.withUnsafeBytes({ configured.parse($0) }) else {
            Issue.record("no head")
            return
        }
        #expect(Self.text(bytes, head.extra0) == "v")
    }

    @Test func answersStayUntilReset() {
        var parser = RequestHeadParser()
        let bad = Array("GET / HTTP/1.1\nHost: x\r\n\r\n".utf8)
        #expect(bad.withUnsafeBytes { parser.parse($0) } == .refused(.bareLF))
        #expect((bad + bad).withUnsafeBytes { parser.parse($0) } == .refused(.bareLF))
        parser.reset()
        let good = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let outcome = good.withUnsafeBytes { parser.parse($0) }
        #expect(outcome == (good + bad).withUnsafeBytes { parser.parse($0) })
        var empty = RequestHeadParser()
        #expect(empty.parse(UnsafeRawBufferPointer(start: nil, count: 0)) == .incomplete)
    }

    /// The target and values are skipped eight bytes at a time: a stopping byte at every offset within
    /// and across words, and bytes from 0x80 up (which must not hide one), are still found.
    @Test func everyOffsetInAWord() {
        for offset in 0..<24 {
            let filler = String(repeating: "a", count: offset)
            #expect(Self.problem("GET /\(filler)\t HTTP/1.1\r\n") == .invalidTarget, "offset \(offset)")
            #expect(Self.problem("GET /\(filler)\u{7F} HTTP/1.1\r\n") == .invalidTarget, "offset \(offset)")
            #expect(Self.problem(Self.bytes("GET /\(filler)", UInt8(0x80), " HTTP/1.1\r\n")) == .invalidTarget, "offset \(offset)")
            #expect(Self.problem("GET /\(filler)\nHost: x\r\n\r\n") == .bareLF, "offset \(offset)")
            #expect(Self.head("GET /\(filler) HTTP/1.1\r\nHost: x\r\n\r\n")?.target.count == offset + 1, "offset \(offset)")
            let high = [UInt8](repeating: 0xFF, count: offset)
            #expect(Self.problem(Self.bytes("GET / HTTP/1.1\r\nX: ", high, UInt8(0x0A), "\r\n")) == .bareLF, "offset \(offset)")
            #expect(
                Self.problem(Self.bytes("GET / HTTP/1.1\r\nX: ", high, UInt8(0x7F), "\r\n")) == .controlCharacterInHeader,
                "offset \(offset)")
            #expect(
                Self.problem(Self.bytes("GET / HTTP/1.1\r\nX: ", high, UInt8(0x1F), "\r\n")) == .controlCharacterInHeader,
                "offset \(offset)")
            #expect(Self.problem(Self.bytes("GET / HTTP/1.1\r\nX: \(filler)", UInt8(0), "\r\n")) == .nulInHeader, "offset \(offset)")
            let mixed = Self.bytes("GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: \(filler)", [0x80, 0x9F, 0xA0, 0xFF], "\t~ \r\n\r\n")
            #expect(Self.head(mixed)?.userAgent?.count == offset + 6, "offset \(offset)")
        }
    }

    // MARK: - Pieces

    @Test func byteClasses() {
        let tchars = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        let hostBytes = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]_~%!$&'()*+,;=".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(RequestHeadParser.isTokenByte(byte) == tchars.contains(byte), "\(byte)")
            #expect(RequestHeadParser.isHostByte(byte) == hostBytes.contains(byte), "\(byte)")
        }
    }

    @Test func statuses() {
        let special: [HeadProblem: Int] = [.unknownMethod: 501, .unsupportedVersion: 505, .targetTooLong: 414, .headTooLarge: 431]
        for problem in HeadProblem.allCases {
            #expect(problem.status == special[problem] ?? 400, "\(problem)")
        }
        #expect(HeadProblem.allCases.count == 21)
    }

    // MARK: - RobustnessTests' hostile heads

    /// Every head-level case of the integration suite's hostile requests, with the code this parser gives
    /// (where evhttp answered without one, the code is new).
    @Test func robustnessCases() {
        let link = "/nl?externalPurchaseToken=abc&bundleId=com.example"
        func request(_ target: String, method: String = "GET", headers: String = "Host: x\r\n", body: String = "") -> String {
            "\(method) \(target) HTTP/1.1\r\n\(headers)\r\n\(body)"
        }
        let cases: [(String, String, HeadProblem?)] = [
            ("encoded slash", request("%2Fnl"), .unsupportedTargetForm),
            ("unknown method", request(link, method: "BREW"), .unknownMethod),
            ("lower-case method", request(link, method: "get"), .unknownMethod),
            ("CONNECT to elsewhere", "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n", .unsupportedTargetForm),
            ("absolute-form target", request("http://evil.example" + link), nil),
            ("absolute-form target with user info", request("http://user@evil.example" + link), .unsupportedTargetForm),
            ("absolute-form target of another scheme", request("ftp://evil.example" + link), .unsupportedTargetForm),
            ("asterisk target", request("*", method: "OPTIONS"), .unsupportedTargetForm),
            ("two spaces after the method", "GET  \(link) HTTP/1.1\r\nHost: x\r\n\r\n", .unsupportedTargetForm),
            (
                "Transfer-Encoding chunked on GET", request(link, headers: "Host: x\r\nTransfer-Encoding: chunked\r\n", body: "0\r\n\r\n"),
                .transferEncoding
            ),
            ("Transfer-Encoding identity", request(link, headers: "Host: x\r\nTransfer-Encoding: identity\r\n"), .transferEncoding),
            (
                "TE and CL", request(link, headers: "Host: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n", body: "0\r\n\r\n"),
                .transferEncoding
            ),
            ("a body", request(link, headers: "Host: x\r\nContent-Length: 5\r\n", body: "hello"), nil),
            (
                "a chunked body on POST",
                request(link, method: "POST", headers: "Host: x\r\nTransfer-Encoding: chunked\r\n", body: "5\r\nhello\r\n0\r\n\r\n"),
                .transferEncoding
            ),
            ("TRACE with a body", "TRACE / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd", nil),
            (
                "Content-Length twice", request(link, headers: "Host: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n"),
                .duplicateContentLength
            ),
            ("negative Content-Length", request(link, headers: "Host: x\r\nContent-Length: -1\r\n"), .invalidContentLength),
            ("Content-Length not a number", request(link, headers: "Host: x\r\nContent-Length: abc\r\n"), .invalidContentLength),
            ("Host twice", request(link, headers: "Host: x\r\nHost: evil.example\r\n"), .duplicateHost),
            ("control byte in a header value", request(link, headers: "Host: x\r\nX-A: a\u{01}b\r\n"), .controlCharacterInHeader),
            ("DEL in a header value", request(link, headers: "Host: x\r\nX-A: a\u{7F}b\r\n"), .controlCharacterInHeader),
            ("space in a header name", request(link, headers: "Host: x\r\nX A: b\r\n"), .controlCharacterInHeader),
            ("header line without a colon", request(link, headers: "Host: x\r\nGarbage\r\n"), .invalidHeaderName),
            ("HTTP/2.0", "GET \(link) HTTP/2.0\r\nHost: x\r\n\r\n", .unsupportedVersion),
            ("HTTP/0.9 request", "GET \(link)\r\n\r\n", .badRequestLine),
            ("bad version", "GET \(link) HTTP/1.x\r\nHost: x\r\n\r\n", .badRequestLine),
            ("tab in the target", request("/nl\t?x"), .invalidTarget),
            ("UTF-8 in the target", request("/nl?x=é"), .invalidTarget),
            ("a 20 KB header", request(link, headers: "Host: x\r\nX-A: \(String(repeating: "a", count: 20_000))\r\n"), .headTooLarge),
            ("a 20 KB target", request("/nl?" + String(repeating: "a", count: 20_000)), .targetTooLong),
            ("3,000 headers", request(link, headers: "Host: x\r\n" + (0..<3000).map { "X-\($0): v\r\n" }.joined()), .headTooLarge),
            ("empty request line", "\r\n\r\n", .badRequestLine),
            ("NUL in a header value", request(link, headers: "Host: x\r\nX-A: a\u{0}b\r\n"), .nulInHeader),
            ("NUL cutting off the rest of the request line", "GET \(link) HTTP/1.1\u{0}junk\r\nHost: x\r\n\r\n", .nulInHeader),
            ("NUL in Host", request(link, headers: "Host: x\u{0}.evil.example\r\n"), .nulInHeader),
            ("obs-fold line", request(link, headers: "Host: x\r\nX-A: a\r\n b\r\n"), .obsFold),
            ("obs-fold with a tab", request(link, headers: "Host: x\r\nX-A: a\r\n\tb\r\n"), .obsFold),
            ("obs-fold hiding Transfer-Encoding", request(link, headers: "Host: x\r\nX-A: a\r\n Transfer-Encoding: chunked\r\n"), .obsFold),
            ("bare LF line endings", "GET \(link) HTTP/1.1\nHost: x\n\n", .bareLF),
            ("bare LF ending one header", "GET \(link) HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n", .bareLF),
            ("bare LF ending the head", "GET \(link) HTTP/1.1\r\nHost: x\r\n\n", .bareLF),
            ("HTTP/1.1 without Host", "GET \(link) HTTP/1.1\r\n\r\n", .missingHost),
            ("HTTP/1.1 without Host, a lookalike header", "GET \(link) HTTP/1.1\r\nX-Host: x\r\n\r\n", .missingHost),
        ]
        for (name, text, expected) in cases {
            let outcome = Self.parse(text)
            if let expected {
                #expect(outcome == .refused(expected), "\(name)")
            } else if case .head = outcome {
            } else {
                Issue.record("\(name): \(outcome)")
            }
        }
        // The other methods RobustnessTests sends parse, for the route to answer 405.
        for method in ["POST", "PUT", "DELETE", "TRACE"] {
            #expect(Self.head(request(link, method: method))?.method.name == method)
        }
    }
}
