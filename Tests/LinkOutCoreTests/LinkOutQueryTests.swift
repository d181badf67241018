import Testing

@testable import LinkOutCore

@Suite("LinkOutQuery")
struct LinkOutQueryTests {
    private func parse(_ query: String) -> Result<LinkOutQuery, TokenRejection> {
        LinkOutQuery.parse(query.bytes)
    }

    private func parsed(_ query: String) -> LinkOutQuery? {
        guard case .success(let value) = parse(query) else { return nil }
        return value
    }

    @Test("both parameters, in StoreKit's order")
    func bothParameters() {
        #expect(
            parse("externalPurchaseToken=abc&bundleId=com.example")
                == .success(LinkOutQuery(token: "abc".bytes, bundleId: "com.example".bytes)))
    }

    @Test("order does not matter")
    func reversedOrder() {
        #expect(
            parse("bundleId=com.example&externalPurchaseToken=abc")
                == .success(LinkOutQuery(token: "abc".bytes, bundleId: "com.example".bytes)))
    }

    @Test("other parameters are ignored, wherever they are")
    func otherParametersIgnored() {
        #expect(
            parse("utm_source=app&externalPurchaseToken=abc&x=1&bundleId=com.example&flag&y=")
                == .success(LinkOutQuery(token: "abc".bytes, bundleId: "com.example".bytes)))
        #expect(parse("utm_source=app&x=1") == .success(LinkOutQuery()))
        #expect(parse("") == .success(LinkOutQuery()))
    }

    @Test("names are case-sensitive, as Apple prints them")
    func caseSensitiveNames() {
        #expect(
            parse("ExternalPurchaseToken=abc&bundleid=com.example&externalpurchasetoken=x&BundleId=y")
                == .success(LinkOutQuery()))
    }

    @Test("names are matched exactly, not by prefix")
    func exactNames() {
        #expect(parse("externalPurchaseTokenX=abc&xbundleId=com.example&bundleId2=z") == .success(LinkOutQuery()))
    }

    @Test("%3D is decoded to '=', in either case")
    func percentEncodedEquals() {
        #expect(parsed("externalPurchaseToken=QQ%3D%3D")?.token == "QQ==".bytes)
        #expect(parsed("externalPurchaseToken=QQ%3d%3d")?.token == "QQ==".bytes)
        #expect(parsed("bundleId=com%2Eexample")?.bundleId == "com.example".bytes)
        #expect(parsed("bundleId=%C3%A9")?.bundleId == [0xC3, 0xA9])
    }

    @Test("a raw '=' inside a value is part of the value")
    func rawEqualsInValue() {
        #expect(
            parsed("externalPurchaseToken=QQ==&bundleId=a=b")
                == LinkOutQuery(token: "QQ==".bytes, bundleId: "a=b".bytes))
    }

    @Test("'+' stays '+' (it is base64 in the token)")
    func plusIsKept() {
        #expect(parsed("externalPurchaseToken=a+b/c")?.token == "a+b/c".bytes)
        #expect(parsed("externalPurchaseToken=a%2Bb")?.token == "a+b".bytes)
        #expect(parsed("externalPurchaseToken=a%20b")?.token == "a b".bytes)
    }

    @Test(
        "a duplicate parameter is refused",
        arguments: [
            "externalPurchaseToken=a&externalPurchaseToken=b",
            "externalPurchaseToken=a&externalPurchaseToken=a",
            "externalPurchaseToken=&externalPurchaseToken=a",
            "externalPurchaseToken&externalPurchaseToken=a",
            "bundleId=com.example&bundleId=com.example",
            "bundleId=com.example&externalPurchaseToken=a&bundleId=evil",
            "externalPurchaseToken=a&bundleId=com.example&x=1&externalPurchaseToken=b",
        ])
    func duplicateParameter(_ query: String) {
        #expect(parse(query) == .failure(TokenRejection(.duplicateParameter)))
    }

    @Test(
        "a malformed %-escape in one of the two parameters is refused",
        arguments: [
            "externalPurchaseToken=abc%", "externalPurchaseToken=abc%4", "externalPurchaseToken=%G1",
            "externalPurchaseToken=%4G", "externalPurchaseToken=%%41", "bundleId=com.example%",
            "bundleId=%zz&externalPurchaseToken=abc", "externalPurchaseToken=%-1",
        ])
    func malformedEscape(_ query: String) {
        #expect(parse(query) == .failure(TokenRejection(.malformedQuery)))
    }

    @Test("a malformed %-escape in another parameter is ignored")
    func malformedEscapeElsewhere() {
        #expect(
            parse("x=%ZZ&externalPurchaseToken=abc&y=%&bundleId=b%")
                == .failure(TokenRejection(.malformedQuery)))
        #expect(
            parse("x=%ZZ&externalPurchaseToken=abc&y=%&bundleId=b")
                == .success(LinkOutQuery(token: "abc".bytes, bundleId: "b".bytes)))
    }

    @Test("empty pairs are skipped")
    func emptyPairs() {
        #expect(
            parse("&&externalPurchaseToken=abc&&&bundleId=b&")
                == .success(LinkOutQuery(token: "abc".bytes, bundleId: "b".bytes)))
        #expect(parse("&") == .success(LinkOutQuery()))
        #expect(parse("&&&") == .success(LinkOutQuery()))
    }

    @Test("a key without '=' gives an empty value")
    func keyWithoutEquals() {
        #expect(
            parse("externalPurchaseToken&bundleId=b")
                == .success(LinkOutQuery(token: [], bundleId: "b".bytes)))
        #expect(parse("bundleId") == .success(LinkOutQuery(token: nil, bundleId: [])))
        #expect(parse("externalPurchaseToken=") == .success(LinkOutQuery(token: [], bundleId: nil)))
    }

    @Test("a slice of a larger buffer parses the same")
    func parsesSlices() {
        let target = Array("/nl?externalPurchaseToken=abc&bundleId=b".utf8)
        #expect(LinkOutQuery.parse(target[4...]) == .success(LinkOutQuery(token: "abc".bytes, bundleId: "b".bytes)))
    }

    @Test("percentDecode")
    func percentDecode() {
        #expect(LinkOutQuery.percentDecode("plain".bytes) == "plain".bytes)
        #expect(LinkOutQuery.percentDecode("%41%62%7e%7E".bytes) == "Ab~~".bytes)
        #expect(LinkOutQuery.percentDecode("%0d%0A".bytes) == [0x0D, 0x0A])
        #expect(LinkOutQuery.percentDecode("%00%ff".bytes) == [0x00, 0xFF])
        #expect(LinkOutQuery.percentDecode("%2541".bytes) == "%41".bytes)  // decoded once only
        #expect(LinkOutQuery.percentDecode("%".bytes) == nil)
        #expect(LinkOutQuery.percentDecode("%a".bytes) == nil)
        #expect(LinkOutQuery.percentDecode("a%g0".bytes) == nil)
    }
}
