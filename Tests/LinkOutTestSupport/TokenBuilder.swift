import Foundation
import LinkOutCore

/// Tokens and visits built from their fields, never taken on trust: the sample app's by default.
package enum TokenBuilder {
    /// The id `token()` gives when none is asked for.
    package static let defaultId = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"

    package static var nowMs: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// A token as the core sees it: fixed fields (the sample app, created at the sample's date), so core
    /// tests give the same results on every run.
    package static func token(
        appAppleId: Int64 = AppleSampleToken.appAppleId, bundleId: String = AppleSampleToken.bundleId,
        created: Int64 = AppleSampleToken.creationDate, id: String = defaultId, type: TokenType? = nil,
        expiration: Int64? = nil
    ) -> ExternalPurchaseToken {
        ExternalPurchaseToken(
            appAppleId: appAppleId, bundleId: bundleId, tokenCreationDate: created, externalPurchaseId: id,
            tokenType: type, tokenExpirationDate: expiration)
    }

    /// A fresh token as StoreKit would send it to a running gateway: a new id, created now.
    package static func minted(
        id: String = UUID().uuidString.lowercased(), bundleId: String = AppleSampleToken.bundleId,
        appAppleId: Int64 = AppleSampleToken.appAppleId, created: Int64 = nowMs, type: TokenType? = nil,
        expiration: Int64? = nil
    ) -> String {
        TokenMinter.mint(token(appAppleId: appAppleId, bundleId: bundleId, created: created, id: id, type: type, expiration: expiration))
    }

    /// Arbitrary JSON text as a token (URL-safe, unpadded, as StoreKit sends it).
    package static func encoded(_ json: String) -> String {
        TokenBase64.encodeURLSafe(Array(json.utf8))
    }

    /// Standard base64 (with '+', '/' and padding) of a URL-safe token's JSON, by Foundation's encoder.
    package static func standardBase64(_ urlSafe: String) -> String {
        let bytes = TokenBase64.decode(Array(urlSafe.utf8))!
        return Data(bytes).base64EncodedString()
    }

    /// A link-out target: the path, then the two parameters StoreKit appends.
    package static func linkOut(_ path: String = "/nl", token: String, bundleId: String = AppleSampleToken.bundleId) -> String {
        "\(path)?externalPurchaseToken=\(token)&bundleId=\(bundleId)"
    }

    /// The link the store tests' visits take.
    package static let link = Link(id: "nl", path: "/nl", country: "nl", destinations: [Destination(url: "https://a.example.com/")])

    /// One visit, as the writer hands it to a store.
    package static func record(
        id: String = UUID().uuidString.lowercased(), seenAt: Int64 = 1_000, stale: Bool = false, type: TokenType? = nil,
        kind: VisitKind = .shopper, experiment: String? = nil, variant: String? = nil,
        country: String? = nil, destination: String = "https://a.example.com/"
    ) -> TokenRecord {
        let token = ExternalPurchaseToken(
            appAppleId: AppleSampleToken.appAppleId, bundleId: AppleSampleToken.bundleId, tokenCreationDate: 500,
            externalPurchaseId: id, tokenType: type, tokenExpirationDate: type == nil ? nil : 9_000)
        return TokenRecord(
            token: token, link: link.id, country: country ?? link.country, destination: destination, seenAt: seenAt,
            stale: stale, kind: kind, experiment: experiment, variant: variant)
    }
}
