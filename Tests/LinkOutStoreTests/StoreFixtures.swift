import Foundation
import LinkOutCore
import LinkOutStore

enum StoreFixtures {
    static let link = Link(id: "nl", path: "/nl", country: "nl", destinations: [Destination(url: "https://a.example.com/")])

    static func record(
        id: String = UUID().uuidString.lowercased(), seenAt: Int64 = 1_000, stale: Bool = false, type: TokenType? = nil,
        kind: VisitKind = .shopper, experiment: String? = nil, variant: String? = nil
    ) -> TokenRecord {
        let token = ExternalPurchaseToken(
            appAppleId: 1234567890, bundleId: "com.example", tokenCreationDate: 500, externalPurchaseId: id,
            tokenType: type, tokenExpirationDate: type == nil ? nil : 9_000)
        return TokenRecord(
            token: token, link: link.id, country: link.country, destination: "https://a.example.com/", seenAt: seenAt,
            stale: stale, kind: kind, experiment: experiment, variant: variant)
    }

    static func temporaryPath() -> String {
        NSTemporaryDirectory() + "linkout-store-\(UUID().uuidString)/store.sqlite"
    }

    static func tokens(in store: any TokenStore) throws -> [StoredToken] {
        var tokens: [StoredToken] = []
        try store.forEachToken { tokens.append($0) }
        return tokens
    }
}
