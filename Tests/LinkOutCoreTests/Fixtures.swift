import Foundation
@testable import LinkOutCore

/// Shared fixtures for the core tests. Tokens are built from JSON written here, never taken on trust.
enum Fixtures {
    /// Apple's documented link-out sample token, exactly as printed in its StoreKit documentation.
    static let appleSampleToken =
        "ewoJImFwcEFwcGxlSWQiOjEyMzQ1Njc4OTAsCgkiYnVuZGxlSWQiOiJjb20uZXhhbXBsZSIsCgkidG9rZW5DcmVhdGlvbkRhdGUiOjE3MDYxNjk2MDAwMDAsCgkiZXh0ZXJuYWxQdXJjaGFzZUlkIjoiMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIgp9"

    /// What the sample decodes to, byte for byte (tabs and newlines included).
    static let appleSampleJSON =
        "{\n\t\"appAppleId\":1234567890,\n\t\"bundleId\":\"com.example\",\n\t\"tokenCreationDate\":1706169600000,\n\t\"externalPurchaseId\":\"00000000-0000-0000-0000-000000000000\"\n}"

    static let bundleId = "com.example"
    static let appAppleId: Int64 = 1_234_567_890
    static let created: Int64 = 1_706_169_600_000
    static let uuid = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"

    static let policy = TokenPolicy(maxLength: 4096, maxFutureSkewMs: 300_000, staleAfterMs: 3_600_000)

    static func token(
        appAppleId: Int64 = appAppleId, bundleId: String = bundleId, created: Int64 = created,
        id: String = uuid, type: TokenType? = nil, expiration: Int64? = nil
    ) -> ExternalPurchaseToken {
        ExternalPurchaseToken(
            appAppleId: appAppleId, bundleId: bundleId, tokenCreationDate: created,
            externalPurchaseId: id, tokenType: type, tokenExpirationDate: expiration)
    }

    /// A token's JSON with the four link-out fields, plus `extra` members spliced in at the end.
    static func json(
        appAppleId: String = "1234567890", bundleId: String = "\"com.example\"",
        created: String = "1706169600000", id: String = "\"\(uuid)\"", extra: String = ""
    ) -> String {
        var members = [
            "\"appAppleId\":\(appAppleId)",
            "\"bundleId\":\(bundleId)",
            "\"tokenCreationDate\":\(created)",
            "\"externalPurchaseId\":\(id)",
        ]
        if !extra.isEmpty { members.append(extra) }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// URL-safe, unpadded, as StoreKit sends it.
    static func encode(_ json: String) -> String {
        TokenBase64.encodeURLSafe(Array(json.utf8))
    }

    /// Standard alphabet with padding, computed by Foundation (an independent encoder).
    static func standardBase64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    static func decode(_ json: String, maxLength: Int = 4096) -> Result<ExternalPurchaseToken, TokenRejection> {
        TokenDecoder.decode(Array(encode(json).utf8), maxLength: maxLength)
    }

    static func decode(token text: String, maxLength: Int = 4096) -> Result<ExternalPurchaseToken, TokenRejection> {
        TokenDecoder.decode(Array(text.utf8), maxLength: maxLength)
    }

    /// A small deterministic generator, so "random" inputs are the same on every run.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func randomBytes(_ count: Int, using generator: inout SplitMix64) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// A random lowercase UUID string.
    static func randomUUID(using generator: inout SplitMix64) -> String {
        let hex = Array("0123456789abcdef")
        var out = ""
        for index in 0..<32 {
            if [8, 12, 16, 20].contains(index) { out.append("-") }
            out.append(hex[Int.random(in: 0..<16, using: &generator)])
        }
        return out
    }
}

extension String {
    var bytes: [UInt8] { Array(utf8) }
}
