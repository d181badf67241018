import LinkOutTestSupport
import Testing

@testable import LinkOutCore

/// `CompactTokenJSON` reads StoreKit's compact form and declines anything else; where it answers, it must
/// read exactly what the general reader reads, so decoding a token gives what it always gave.
@Suite("CompactTokenJSON")
struct CompactTokenJSONTests {
    typealias F = Fixtures

    private func fields(_ json: String) -> TokenFields? { Array(json.utf8).withUnsafeBytes { CompactTokenJSON.fields($0) } }
    private func general(_ json: String) -> TokenFields? { Array(json.utf8).withUnsafeBytes { TokenDecoder.readFields($0) } }

    @Test("StoreKit's compact tokens are read by the compact reader, the same as by the general one")
    func compact() {
        let tokens = [
            F.json(),
            F.json(id: "\"SANDBOX_\(TokenBuilder.defaultId)\""),
            F.json(appAppleId: "0", created: "-5"),
            F.json(extra: #""tokenType":"ACQUISITION","tokenExpirationDate":1706169900000"#),
            F.json(extra: #""tokenType":"lower case is a wrong shape""#),
            F.json(id: "\"not-a-uuid\""),
            AppleSampleToken.json,
        ]
        for json in tokens where !json.contains(" ") && !json.contains("\n") {
            #expect(fields(json) != nil, "\(json)")
            #expect(fields(json) == general(json), "\(json)")
        }
        #expect(
            fields(F.json())
                == TokenFields(
                    appAppleId: AppleSampleToken.appAppleId, bundleId: AppleSampleToken.bundleId,
                    tokenCreationDate: AppleSampleToken.creationDate, externalPurchaseId: TokenBuilder.defaultId))
    }

    @Test(
        "anything else is left to the general reader",
        arguments: [
            "", "{}", "{ }", "[]", "{\"appAppleId\":1", "{\"appAppleId\":1}x", "{\"appAppleId\":1} ", " {\"appAppleId\":1}",
            "{\"appAppleId\": 1}", "{\"appAppleId\" :1}", "{\"appAppleId\":1 ,\"bundleId\":\"a\"}",
            "{\"appAppleId\":1.5}", "{\"appAppleId\":1e3}", "{\"appAppleId\":01}", "{\"appAppleId\":-}", "{\"appAppleId\":+1}",
            "{\"appAppleId\":1234567890123456789}", "{\"appAppleId\":\"1\"}", "{\"bundleId\":1}", "{\"bundleId\":null}",
            "{\"bundleId\":\"a\\\"b\"}", "{\"bundleId\":\"a\\u0062\"}", "{\"bundleId\":\"é\"}", "{\"bundl\\u0065Id\":\"a\"}",
            "{\"other\":1}", "{\"appAppleId\":1,\"appAppleId\":1}", "{\"appAppleId\":1,}", "{,\"appAppleId\":1}",
            "{\"appAppleId\":[1]}", "{\"bundleId\":\"a\tb\"}",
        ])
    func declines(_ json: String) {
        #expect(fields(json) == nil)
    }

    @Test("on thousands of variants, decoding gives what the general reader alone gives")
    func variants() {
        var generator = F.SplitMix64(seed: 51)
        let members = [
            #""appAppleId":1234567890"#, #""appAppleId":-7"#, #""appAppleId":0"#, #""appAppleId":01"#, #""appAppleId":1.0"#,
            #""appAppleId":"1""#, #""appAppleId":99999999999999999999"#, #""bundleId":"com.example""#, #""bundleId":"com.\u0065xample""#,
            #""bundleId":7"#, #""bundleId":"é""#, #""tokenCreationDate":1706169600000"#, #""tokenCreationDate":1e12"#,
            #""externalPurchaseId":"\#(TokenBuilder.defaultId)""#, #""externalPurchaseId":"SANDBOX-\#(TokenBuilder.defaultId)""#,
            #""externalPurchaseId":"x""#,
            #""tokenType":"SERVICES""#, #""tokenType":"bad type""#, #""tokenExpirationDate":1706169900000"#,
            #""unknown":{"a":[1,2,{"b":null}]}"#, #""unknown":"x""#, #""bundleId":null"#,
        ]
        let separators = [",", ",", ",", ", ", ",\n", " ,"]
        var readCompactly = 0
        for _ in 0..<5_000 {
            // Half are StoreKit's shape: each known field at most once, in any order, no whitespace.
            let clean = Bool.random(using: &generator)
            let picked =
                clean
                ? Array(
                    Dictionary(grouping: members.prefix(19), by: { $0.prefix(12) }).values.compactMap {
                        $0.randomElement(using: &generator)
                    }
                    .shuffled(using: &generator).prefix(Int.random(in: 1...6, using: &generator)))
                : (0..<Int.random(in: 0...7, using: &generator)).map { _ in members.randomElement(using: &generator)! }
            var json = "{"
            for (index, member) in picked.enumerated() {
                json += (index == 0 ? "" : clean ? "," : separators.randomElement(using: &generator)!) + member
            }
            json += clean ? "}" : ["}", "}", "}", " }", "}\n", ",}"].randomElement(using: &generator)!
            if Int.random(in: 0..<10, using: &generator) == 0 {
                json = String(json.prefix(Int.random(in: 0...json.count, using: &generator)))
            }
            let compact = fields(json)
            if let compact {
                readCompactly += 1
                #expect(compact == general(json), "\(json)")
            }
            let decoded = TokenDecoder.decodeJSON(Array(json.utf8))
            let expected = general(json).map { $0.token() } ?? .failure(TokenRejection(.tokenNotJSON))
            #expect(decoded == expected, "\(json)")
        }
        // Both paths are exercised: a good share of the variants is StoreKit's compact form.
        #expect(readCompactly > 400)
    }
}
