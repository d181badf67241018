import Foundation
import LinkOutTestSupport

@testable import LinkOutCore

/// The core tests' own fixtures: token JSON written out by hand, and deterministic random input. Apple's
/// sample token and the token builders are LinkOutTestSupport's.
enum Fixtures {
    static let policy = TokenPolicy(maxLength: 4096, maxFutureSkewMs: 300_000, staleAfterMs: 3_600_000)

    /// A token's JSON with the four link-out fields, plus `extra` members spliced in at the end.
    static func json(
        appAppleId: String = "1234567890", bundleId: String = "\"com.example\"",
        created: String = "1706169600000", id: String = "\"\(TokenBuilder.defaultId)\"", extra: String = ""
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

    /// Standard alphabet with padding, computed by Foundation (an independent encoder).
    static func standardBase64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    static func decode(_ json: String, maxLength: Int = 4096) -> Result<ExternalPurchaseToken, TokenRejection> {
        TokenDecoder.decode(Array(TokenBuilder.encoded(json).utf8), maxLength: maxLength)
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
