import Testing
@testable import LinkOutCore

@Suite("request head rules")
struct RequestHeadRulesTests {
    private func target(_ text: String) -> HeadProblem? {
        Array(text.utf8).withUnsafeBytes { RequestHeadRules.check(target: $0) }
    }

    private func headers(_ pairs: [(String, [UInt8])], bodyAllowed: Bool = false) -> HeadProblem? {
        var rules = RequestHeadRules(bodyAllowed: bodyAllowed)
        for (name, value) in pairs {
            let problem = Array(name.utf8).withUnsafeBytes { name in value.withUnsafeBytes { rules.check(name: name, value: $0) } }
            if let problem { return problem }
        }
        return nil
    }

    @Test func targets() {
        #expect(target("/nl?externalPurchaseToken=a&bundleId=b") == nil)
        #expect(target("/") == nil)
        #expect(target("") == .absoluteFormTarget)
        #expect(target("*") == .absoluteFormTarget)
        #expect(target("http://evil.example/nl") == .absoluteFormTarget)
        #expect(target("nl") == .absoluteFormTarget)
        #expect(target("/nl x") == .invalidTarget)
        #expect(target("/nl\u{7F}") == .invalidTarget)
        #expect(target("/é") == .invalidTarget)
    }

    @Test func headerBytes() {
        #expect(headers([("Host", Array("x".utf8)), ("User-Agent", Array("Mozilla/5.0\t(iPhone)".utf8))]) == nil)
        #expect(headers([("X-A", [0x61, 0x00, 0x62])]) == .controlCharacterInHeader)
        #expect(headers([("X-A", [0x61, 0x0D, 0x0A, 0x62])]) == .controlCharacterInHeader)
        #expect(headers([("X-A", [0x7F])]) == .controlCharacterInHeader)
        #expect(headers([("X A", [])]) == .controlCharacterInHeader)
        #expect(headers([("X-\u{1}", [])]) == .controlCharacterInHeader)
        // Non-ASCII (obs-text) in a value is allowed by RFC 9110; in a name it is not.
        #expect(headers([("X-A", [0xC3, 0xA9])]) == nil)
        #expect(headers([("X-é", [])]) == .controlCharacterInHeader)
    }

    @Test func framingHeaders() {
        #expect(headers([("Transfer-Encoding", Array("chunked".utf8))]) == .transferEncoding)
        #expect(headers([("transfer-encoding", Array("identity".utf8))]) == .transferEncoding)
        #expect(headers([("Host", Array("a".utf8)), ("HOST", Array("b".utf8))]) == .duplicateHost)
        #expect(headers([("Content-Length", Array("0".utf8)), ("content-length", Array("0".utf8))]) == .duplicateContentLength)
        #expect(headers([("Host", Array("a".utf8)), ("Content-Length", Array("0".utf8))]) == nil)
        // Any other length announces a body, which a HEAD's parser would read as the next request.
        for length in ["1", "60", "00", "0 ", " 0", "-0"] {
            #expect(headers([("Content-Length", Array(length.utf8))]) == .bodyNotAllowed, "\(length)")
        }
    }

    /// Apple's notification (a POST on notifications.path) is the one request with a body: a length, or
    /// chunked alone; never both, never another coding, never two lengths.
    @Test func theNotificationPostMayHaveABody() {
        #expect(headers([("Content-Length", Array("1200".utf8))], bodyAllowed: true) == nil)
        #expect(headers([("Transfer-Encoding", Array("chunked".utf8))], bodyAllowed: true) == nil)
        #expect(headers([("Transfer-Encoding", Array("chunked".utf8)), ("Content-Length", Array("5".utf8))], bodyAllowed: true) == .transferEncoding)
        #expect(headers([("Content-Length", Array("5".utf8)), ("Transfer-Encoding", Array("chunked".utf8))], bodyAllowed: true) == .transferEncoding)
        #expect(headers([("Transfer-Encoding", Array("gzip, chunked".utf8))], bodyAllowed: true) == .transferEncoding)
        #expect(headers([("Content-Length", Array("5".utf8)), ("Content-Length", Array("5".utf8))], bodyAllowed: true) == .duplicateContentLength)
    }

    @Test func hostIsRequiredFromHTTP11() {
        var rules = RequestHeadRules()
        #expect(rules.checkEnd(major: 1, minor: 1) == .missingHost)
        #expect(rules.checkEnd(major: 1, minor: 0) == nil)
        #expect(rules.checkEnd(major: 0, minor: 9) == nil)
        #expect(Array("X-Host".utf8).withUnsafeBytes { name in Array("x".utf8).withUnsafeBytes { rules.check(name: name, value: $0) } } == nil)
        #expect(rules.checkEnd(major: 1, minor: 1) == .missingHost, "only Host itself counts")
        #expect(Array("hOsT".utf8).withUnsafeBytes { name in [UInt8]().withUnsafeBytes { rules.check(name: name, value: $0) } } == nil)
        #expect(rules.checkEnd(major: 1, minor: 1) == nil, "an empty Host is allowed (RFC 9112 §3.2)")
    }
}
