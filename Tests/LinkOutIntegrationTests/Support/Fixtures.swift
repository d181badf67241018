import Foundation
import LinkOutCore

/// Tokens and configs for the integration tests.
enum Fixtures {
    /// Apple's documented link-out sample: com.example / 1234567890, id all zeros, created 1706169600000.
    static let appleSampleToken = "ewoJImFwcEFwcGxlSWQiOjEyMzQ1Njc4OTAsCgkiYnVuZGxlSWQiOiJjb20uZXhhbXBsZSIsCgkidG9rZW5DcmVhdGlvbkRhdGUiOjE3MDYxNjk2MDAwMDAsCgkiZXh0ZXJuYWxQdXJjaGFzZUlkIjoiMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIgp9"

    static var nowMs: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// A fresh token for the shipped app, as StoreKit would send it.
    static func token(
        id: String = UUID().uuidString.lowercased(), bundleId: String = "com.example", appAppleId: Int64 = 1234567890,
        created: Int64 = Fixtures.nowMs, type: TokenType? = nil, expires: Int64? = nil
    ) -> String {
        TokenMinter.mint(ExternalPurchaseToken(
            appAppleId: appAppleId, bundleId: bundleId, tokenCreationDate: created, externalPurchaseId: id,
            tokenType: type, tokenExpirationDate: expires))
    }

    /// Encodes arbitrary JSON text as a token (URL-safe, unpadded).
    static func rawToken(_ json: String) -> String {
        TokenBase64.encodeURLSafe(Array(json.utf8))
    }

    static func linkOut(_ path: String = "/nl", token: String, bundleId: String = "com.example") -> String {
        "\(path)?externalPurchaseToken=\(token)&bundleId=\(bundleId)"
    }

    /// A config with one app and the given links JSON (an array body), pages from the package's Public/.
    static func config(links: String, extra: String = "") -> String {
        """
        {
          \(extra)
          "publicDir": "\(LinkoutBinary.packageRoot.path)/Public",
          "apps": [{ "bundleId": "com.example", "appAppleId": 1234567890 }],
          "links": \(links)
        }
        """
    }

    /// Standard base64 (with '+', '/' and padding) of the token's JSON.
    static func standardBase64(_ urlSafe: String) -> String {
        let bytes = TokenBase64.decode(Array(urlSafe.utf8))!
        return Data(bytes).base64EncodedString()
    }
}
