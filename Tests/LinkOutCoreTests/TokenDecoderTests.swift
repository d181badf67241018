import Foundation
import LinkOutTestSupport
import Testing

@testable import LinkOutCore

@Suite("TokenDecoder")
struct TokenDecoderTests {
    typealias F = Fixtures

    private func rejection(_ json: String) -> TokenRejection? {
        guard case .failure(let rejection) = F.decode(json) else { return nil }
        return rejection
    }

    // MARK: Apple's sample

    @Test("Apple's documented sample token decodes to its documented values")
    func appleSample() throws {
        let bytes = try #require(TokenBase64.decode(AppleSampleToken.text.bytes))
        #expect(String(decoding: bytes, as: UTF8.self) == AppleSampleToken.json)
        #expect(bytes.contains(0x09) && bytes.contains(0x0A))  // tabs and newlines, as printed

        let token = try F.decode(token: AppleSampleToken.text).get()
        #expect(
            token
                == ExternalPurchaseToken(
                    appAppleId: 1_234_567_890, bundleId: "com.example", tokenCreationDate: 1_706_169_600_000,
                    externalPurchaseId: "00000000-0000-0000-0000-000000000000"))
        #expect(token.tokenType == nil)
        #expect(token.tokenExpirationDate == nil)
        #expect(token.environment == .production)
    }

    @Test("the sample decodes the same in every accepted form")
    func appleSampleForms() throws {
        let expected = try F.decode(token: AppleSampleToken.text).get()
        let json = Array(AppleSampleToken.json.utf8)
        let standard = F.standardBase64(json)
        #expect(try F.decode(token: standard).get() == expected)
        #expect(try F.decode(token: TokenBase64.encodeURLSafe(json)).get() == expected)
        #expect(try F.decode(token: standard.replacingOccurrences(of: "+", with: " ")).get() == expected)
        // The same JSON with one extra byte, so the encoding needs padding.
        let padded = F.standardBase64(json + [0x20])
        #expect(padded.hasSuffix("="))
        #expect(try F.decode(token: padded).get() == expected)
        #expect(try F.decode(token: String(padded.prefix(while: { $0 != "=" }))).get() == expected)
    }

    @Test("a minted token round-trips, with and without the custom-link fields")
    func mintedRoundTrip() throws {
        let plain = TokenBuilder.token()
        #expect(try F.decode(token: TokenMinter.mint(plain)).get() == plain)
        for type in TokenType.known + [TokenType(rawValue: "BRAND_NEW_KIND")!] {
            let custom = TokenBuilder.token(
                id: "SANDBOX_" + TokenBuilder.defaultId, type: type, expiration: AppleSampleToken.creationDate + 3_600_000)
            #expect(try F.decode(token: TokenMinter.mint(custom)).get() == custom)
        }
    }

    // MARK: Length and encoding

    @Test("a token longer than maxLength is refused; exactly maxLength is accepted")
    func tooLong() {
        let encoded = TokenBuilder.encoded(F.json())
        let length = encoded.utf8.count
        #expect(F.decode(token: encoded, maxLength: length - 1) == .failure(TokenRejection(.tokenTooLong)))
        #expect(F.decode(token: encoded, maxLength: length).isSuccess)
        // Length is checked before anything else: garbage that is too long is "too long".
        #expect(F.decode(token: String(repeating: "!", count: 65), maxLength: 64) == .failure(TokenRejection(.tokenTooLong)))
    }

    @Test("bytes that are not base64 are refused", arguments: ["!!!!", "a", "abcde", "QQ=Q", "eyJ\"", "QUJD===", "QUJD\n"])
    func notBase64(_ text: String) {
        #expect(F.decode(token: text) == .failure(TokenRejection(.tokenNotBase64)))
    }

    // MARK: Not JSON

    @Test(
        "bytes that are not one JSON object are refused",
        arguments: [
            "", "not json", "[1,2]", "\"string\"", "123", "null", "true",
            "{", "{\"appAppleId\":1234567890", "{\"appAppleId\":}", "{appAppleId:1}", "{'appAppleId':1}",
            "{\"appAppleId\":1234567890,}", "{\"a\":1 \"b\":2}", "{\"a\" 1}",
            "{\"a\":tru}", "{\"a\":nul}", "{\"a\":01}", "{\"a\":-}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":1e}", "{\"a\":+1}",
            "{\"a\":\"unterminated}", "{\"a\":\"bad \\x escape\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}",
            "{\"a\":\"\\udc00\"}", "{\"a\":\"raw\ttab\"}", "{\"a\":\"raw\nnewline\"}",
            "{\"a\":NaN}", "{\"a\":Infinity}", "{\"a\":[1,2}", "{\"a\":{\"b\":1]}",
            "\u{FEFF}{}",
        ])
    func notJSON(_ json: String) {
        #expect(rejection(json) == TokenRejection(.tokenNotJSON))
    }

    @Test("trailing data after the object is refused")
    func trailingGarbage() {
        #expect(rejection(F.json() + "x") == TokenRejection(.tokenNotJSON))
        #expect(rejection(F.json() + "{}") == TokenRejection(.tokenNotJSON))
        #expect(rejection(F.json() + F.json()) == TokenRejection(.tokenNotJSON))
        #expect(rejection(F.json() + ",") == TokenRejection(.tokenNotJSON))
        #expect(rejection(F.json() + "\u{0}") == TokenRejection(.tokenNotJSON))
        // Trailing whitespace is fine.
        #expect(F.decode(F.json() + " \t\r\n").isSuccess)
    }

    @Test("invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        var bytes = Array(F.json(bundleId: "\"com.exampleX\"").utf8)
        let index = bytes.firstIndex(of: UInt8(ascii: "X"))!
        bytes[index] = 0xFF
        let encoded = TokenBase64.encodeURLSafe(bytes)
        #expect(F.decode(token: encoded) == .failure(TokenRejection(.tokenNotJSON)))
    }

    @Test("a known field given twice is refused, even with the same value", arguments: TokenField.allCases)
    func duplicateKnownField(_ field: TokenField) {
        let value: String
        switch field {
        case .appAppleId: value = "1234567890"
        case .bundleId: value = "\"com.example\""
        case .tokenCreationDate: value = "1706169600000"
        case .externalPurchaseId: value = "\"\(TokenBuilder.defaultId)\""
        case .tokenType: value = "\"ACQUISITION\""
        case .tokenExpirationDate: value = "1706173200000"
        }
        let member = "\"\(field.rawValue)\":\(value)"
        var extra: [String] = []
        switch field {
        case .tokenType: extra = [member, member, "\"tokenExpirationDate\":1706173200000"]
        case .tokenExpirationDate: extra = [member, member, "\"tokenType\":\"ACQUISITION\""]
        default: extra = [member]  // F.json already has the four link-out fields once
        }
        #expect(rejection(F.json(extra: extra.joined(separator: ","))) == TokenRejection(.tokenNotJSON))
        // Once is fine.
        #expect(F.decode(F.json(extra: "\"tokenType\":\"ACQUISITION\",\"tokenExpirationDate\":1706173200000")).isSuccess)
    }

    @Test("a duplicate spelt with an escape is still a duplicate")
    func duplicateThroughEscape() {
        #expect(rejection(F.json(extra: #""\u0062undleId":"com.evil""#)) == TokenRejection(.tokenNotJSON))
    }

    @Test("a duplicate unknown field is ignored")
    func duplicateUnknownField() {
        #expect(F.decode(F.json(extra: #""foo":1,"foo":"two""#)) == .success(TokenBuilder.token()))
    }

    // MARK: Missing fields

    @Test(
        "each of the four required fields is reported when missing",
        arguments: [
            TokenField.appAppleId, .bundleId, .tokenCreationDate, .externalPurchaseId,
        ])
    func missingField(_ missing: TokenField) {
        let values: [(TokenField, String)] = [
            (.appAppleId, "1234567890"), (.bundleId, "\"com.example\""),
            (.tokenCreationDate, "1706169600000"), (.externalPurchaseId, "\"\(TokenBuilder.defaultId)\""),
        ]
        let members = values.filter { $0.0 != missing }.map { "\"\($0.0.rawValue)\":\($0.1)" }
        let json = "{" + members.joined(separator: ",") + "}"
        #expect(rejection(json) == TokenRejection(.missingField, field: missing))
    }

    @Test("an empty object reports the first required field")
    func emptyObject() {
        #expect(rejection("{}") == TokenRejection(.missingField, field: .appAppleId))
        #expect(rejection(" { } ") == TokenRejection(.missingField, field: .appAppleId))
    }

    @Test("a field name differing only in case is not the field")
    func fieldNamesAreCaseSensitive() {
        let json =
            #"{"AppAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":1706169600000,"externalPurchaseId":"3f2504e0-4f89-41d3-9a0c-0305e82c3301"}"#
        #expect(rejection(json) == TokenRejection(.missingField, field: .appAppleId))
    }

    // MARK: Wrong types

    @Test(
        "a field of the wrong type is reported with its name",
        arguments: [
            (F.json(appAppleId: "\"1234567890\""), TokenField.appAppleId),
            (F.json(appAppleId: "1234567890.0"), .appAppleId),
            (F.json(appAppleId: "1.23456789e9"), .appAppleId),
            (F.json(appAppleId: "true"), .appAppleId),
            (F.json(appAppleId: "null"), .appAppleId),
            (F.json(appAppleId: "[1234567890]"), .appAppleId),
            (F.json(appAppleId: "{\"id\":1234567890}"), .appAppleId),
            (F.json(appAppleId: "99999999999999999999"), .appAppleId),
            (F.json(bundleId: "123"), .bundleId),
            (F.json(bundleId: "null"), .bundleId),
            (F.json(bundleId: "[\"com.example\"]"), .bundleId),
            (F.json(created: "1706169600000.5"), .tokenCreationDate),
            (F.json(created: "1706169600000.0"), .tokenCreationDate),
            (F.json(created: "1.7061696e12"), .tokenCreationDate),
            (F.json(created: "\"1706169600000\""), .tokenCreationDate),
            (F.json(id: "12345"), .externalPurchaseId),
            (F.json(id: "null"), .externalPurchaseId),
            (F.json(extra: #""tokenType":1,"tokenExpirationDate":1706173200000"#), .tokenType),
            (F.json(extra: #""tokenType":"ACQUISITION","tokenExpirationDate":"1706173200000""#), .tokenExpirationDate),
            (F.json(extra: #""tokenType":"ACQUISITION","tokenExpirationDate":1.5"#), .tokenExpirationDate),
        ])
    func wrongFieldType(_ json: String, _ field: TokenField) {
        #expect(rejection(json) == TokenRejection(.wrongFieldType, field: field))
    }

    @Test("a wrong type is reported even when other fields are missing")
    func wrongTypeBeforeMissing() {
        #expect(rejection(#"{"tokenCreationDate":"soon"}"#) == TokenRejection(.wrongFieldType, field: .tokenCreationDate))
    }

    @Test("64-bit integer limits")
    func integerLimits() {
        #expect(F.decode(F.json(appAppleId: "9223372036854775807")).map(\.appAppleId) == .success(Int64.max))
        #expect(F.decode(F.json(appAppleId: "-9223372036854775808")).map(\.appAppleId) == .success(Int64.min))
        #expect(rejection(F.json(appAppleId: "9223372036854775808")) == TokenRejection(.wrongFieldType, field: .appAppleId))
        #expect(rejection(F.json(appAppleId: "-9223372036854775809")) == TokenRejection(.wrongFieldType, field: .appAppleId))
        #expect(F.decode(F.json(created: "0")).map(\.tokenCreationDate) == .success(0))
        #expect(F.decode(F.json(created: "-0")).map(\.tokenCreationDate) == .success(0))
    }

    // MARK: externalPurchaseId

    @Test(
        "a malformed externalPurchaseId is refused",
        arguments: [
            "", "0000", "not-a-uuid",
            "3f2504e04f8941d39a0c0305e82c3301",  // no dashes
            "{3f2504e0-4f89-41d3-9a0c-0305e82c3301}",  // braces
            "3f2504e0-4f89-41d3-9a0c-0305e82c330",  // one short
            "3f2504e0-4f89-41d3-9a0c-0305e82c33011",  // one long
            "3f2504e0-4f89-41d3-9a0c-0305e82c330g",  // not hex
            "3f2504e0-4f8941d3-9a0c-0305e82c3301-",  // dash moved
            "3f2504e0_4f89_41d3_9a0c_0305e82c3301",  // underscores
            "3f2504e0/4f89-41d3-9a0c-0305e82c3301",  // a slash
            "3f2504e0-4f89-41d3-9a0c-0305e82c33\r\n",  // CR/LF
            "3f2504e0-4f89-41d3-9a0c-0305e82c3301\r\n",  // CR/LF after a valid id
            " 3f2504e0-4f89-41d3-9a0c-0305e82c3301",  // leading space
            "3f2504e0-4f89-41d3-9a0c-0305e82c3301 ",  // trailing space
            "3f2504e0-4f89-41d3-9a0c-0305e82c33\u{00E9}",  // non-ASCII
            "SANDBOX_",  // prefix only
            "SANDBOX__3f2504e0-4f89-41d3-9a0c-0305e82c3301",  // two separators
            "SANDBOX.3f2504e0-4f89-41d3-9a0c-0305e82c3301",  // another separator
            "sandbox_3f2504e0-4f89-41d3-9a0c-0305e82c3301",  // lowercase prefix
            "XSANDBOX_3f2504e0-4f89-41d3-9a0c-0305e82c3301",
            "PRODUCTION_3f2504e0-4f89-41d3-9a0c-0305e82c3301",
            "SANDBOX_3f2504e0-4f89-41d3-9a0c-0305e82c3301/../x",
        ])
    func invalidExternalPurchaseId(_ id: String) {
        let json = F.json(id: JSONText.quote(id))
        #expect(rejection(json) == TokenRejection(.invalidExternalPurchaseId, field: .externalPurchaseId))
        #expect(!ExternalPurchaseID.isValid(id))
    }

    @Test(
        "valid externalPurchaseIds, and their environment",
        arguments: [
            ("3f2504e0-4f89-41d3-9a0c-0305e82c3301", TokenEnvironment.production),
            ("3F2504E0-4F89-41D3-9A0C-0305E82C3301", .production),
            ("00000000-0000-0000-0000-000000000000", .production),
            ("SANDBOX_3f2504e0-4f89-41d3-9a0c-0305e82c3301", .sandbox),
            ("SANDBOX-3f2504e0-4f89-41d3-9a0c-0305e82c3301", .sandbox),
            ("SANDBOX3f2504e0-4f89-41d3-9a0c-0305e82c3301", .sandbox),
        ])
    func validExternalPurchaseId(_ id: String, _ environment: TokenEnvironment) throws {
        #expect(ExternalPurchaseID.isValid(id))
        let token = try F.decode(F.json(id: "\"\(id)\"")).get()
        #expect(token.externalPurchaseId == id)
        #expect(token.environment == environment)
    }

    // MARK: tokenType and tokenExpirationDate

    @Test("each documented token type is accepted with an expiry", arguments: TokenType.known)
    func knownTokenTypes(_ type: TokenType) throws {
        let token = try F.decode(F.json(extra: "\"tokenType\":\"\(type.rawValue)\",\"tokenExpirationDate\":1706173200000")).get()
        #expect(token.tokenType == type)
        #expect(token.tokenType?.isKnown == true)
        #expect(token.tokenExpirationDate == 1_706_173_200_000)
        #expect(token.unusualType == nil)
    }

    @Test(
        "a type Apple may still invent is accepted as sent, flagged",
        arguments: ["BRAND_NEW_KIND", "PURCHASE", "X", "IN_APP_2", "_", String(repeating: "Z", count: 64)])
    func unknownTokenType(_ type: String) throws {
        let token = try F.decode(F.json(extra: "\"tokenType\":\"\(type)\",\"tokenExpirationDate\":1706173200000")).get()
        #expect(token.tokenType?.rawValue == type)
        #expect(token.tokenType?.isKnown == false)
        #expect(token.tokenExpirationDate == 1_706_173_200_000)
        #expect(token.unusualType == .unknownType)
        // Without an expiry as well: the unknown type is what gets flagged.
        #expect(try F.decode(F.json(extra: "\"tokenType\":\"\(type)\"")).get().unusualType == .unknownType)
    }

    @Test(
        "a type outside 1 to 64 of A-Z, 0-9 and _ is refused before it reaches the store or a header",
        arguments: [
            "", "acquisition", "Services", "LINK-OUT", "ACQUISITION ", "IN APP", "A\\r\\nSet-Cookie: a=b", "\\u00c9T\\u00c9",
            "A\\u0000", String(repeating: "Z", count: 65), "<script>",
        ])
    func malformedTokenType(_ type: String) {
        let json = F.json(extra: "\"tokenType\":\"\(type)\",\"tokenExpirationDate\":1706173200000")
        #expect(rejection(json) == TokenRejection(.invalidTokenType, field: .tokenType), "\(type)")
    }

    @Test("tokenType without tokenExpirationDate is accepted, flagged")
    func typeWithoutExpiration() throws {
        let token = try F.decode(F.json(extra: #""tokenType":"ACQUISITION""#)).get()
        #expect(token.tokenType == .acquisition)
        #expect(token.tokenExpirationDate == nil)
        #expect(token.unusualType == .typeWithoutExpiration)
    }

    @Test("tokenExpirationDate without tokenType is accepted, flagged")
    func expirationWithoutType() throws {
        let token = try F.decode(F.json(extra: #""tokenExpirationDate":1706173200000"#)).get()
        #expect(token.tokenType == nil)
        #expect(token.tokenExpirationDate == 1_706_173_200_000)
        #expect(token.unusualType == .expirationWithoutType)
    }

    @Test("TokenType's shape check, and only documented types are known")
    func tokenTypeShape() {
        #expect(TokenType(rawValue: "ACQUISITION") == .acquisition)
        #expect(TokenType.known.map(\.rawValue) == ["ACQUISITION", "SERVICES", "IN_APP", "LINK_OUT"])
        #expect(TokenType(rawValue: "NEW")?.isKnown == false)
        #expect(TokenType(rawValue: "") == nil)
        #expect(TokenType(rawValue: "a") == nil)
        #expect(TokenType(rawValue: String(repeating: "A", count: 64)) != nil)
        #expect(TokenType(rawValue: String(repeating: "A", count: 65)) == nil)
    }

    // MARK: Tolerance

    @Test("unknown extra fields are ignored, including nested objects and arrays")
    func unknownFieldsIgnored() {
        let extra = #""futureField":{"a":[1,{"b":null,"c":[true,false]}],"d":"e"},"list":[1.5e3,-2,"x",[],{}],"s":"\u00e9\"","n":null"#
        #expect(F.decode(F.json(extra: extra)) == .success(TokenBuilder.token()))
        // Also before the known fields.
        let json =
            #"{"first":[{"x":{"y":{}}}],"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":1706169600000,"externalPurchaseId":"3f2504e0-4f89-41d3-9a0c-0305e82c3301"}"#
        #expect(F.decode(json) == .success(TokenBuilder.token()))
    }

    @Test("hostile nesting in an unknown field is refused, not recursed without bound")
    func deepNesting() {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(F.decode(F.json(extra: "\"deep\":\(deep)"), maxLength: 1_000_000) == .failure(TokenRejection(.tokenNotJSON)))
        let deepObject = String(repeating: "{\"a\":", count: 1_000) + "1" + String(repeating: "}", count: 1_000)
        #expect(F.decode(F.json(extra: "\"deep\":\(deepObject)"), maxLength: 1_000_000) == .failure(TokenRejection(.tokenNotJSON)))
        // Modest nesting is fine.
        #expect(F.decode(F.json(extra: "\"shallow\":[[[1]]]")).isSuccess)
    }

    @Test("JSON escapes are decoded before comparing")
    func escapes() throws {
        let token = try F.decode(F.json(bundleId: #""\u0063om.example""#)).get()
        #expect(token.bundleId == "com.example")
        #expect(token == TokenBuilder.token())
        #expect(try F.decode(F.json(bundleId: #""com\u002Eexample""#)).get().bundleId == "com.example")
        #expect(try F.decode(F.json(bundleId: #""com\/example""#)).get().bundleId == "com/example")
        #expect(try F.decode(F.json(bundleId: #""\ud83d\ude00""#)).get().bundleId == "\u{1F600}")
        // An escaped key is the key.
        let json =
            #"{"\u0061ppAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":1706169600000,"externalPurchaseId":"\u0033f2504e0-4f89-41d3-9a0c-0305e82c3301"}"#
        #expect(try F.decode(json).get() == TokenBuilder.token())
        // An escaped CR/LF in the id is still refused.
        #expect(
            rejection(F.json(id: #""3f2504e0-4f89-41d3-9a0c-0305e82c33\r\n""#))
                == TokenRejection(.invalidExternalPurchaseId, field: .externalPurchaseId))
    }

    @Test("whitespace anywhere between tokens is accepted")
    func whitespace() {
        let json =
            " \n\t{ \r\n\"appAppleId\" :\t1234567890 ,\n\"bundleId\"\n:\n\"com.example\"\t,\"tokenCreationDate\":  1706169600000\r\n, \"externalPurchaseId\" : \"\(TokenBuilder.defaultId)\"\n}\n\t "
        #expect(F.decode(json) == .success(TokenBuilder.token()))
    }

    @Test("an unusual but valid string value is kept as written")
    func keepsValues() throws {
        let token = try F.decode(F.json(appAppleId: "42", bundleId: #""a.b-c""#, created: "-5")).get()
        #expect(token.appAppleId == 42)
        #expect(token.bundleId == "a.b-c")
        #expect(token.tokenCreationDate == -5)
    }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
