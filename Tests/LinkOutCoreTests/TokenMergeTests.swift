import LinkOutCore
import Testing

@Suite struct TokenMergeTests {
    static func visit(_ seenAt: Int64, _ kind: VisitKind, country: String = "nl", variant: String? = nil) -> TokenRecord {
        let token = ExternalPurchaseToken(
            appAppleId: 1, bundleId: "com.example", tokenCreationDate: 500, externalPurchaseId: "3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        return TokenRecord(
            token: token, link: "nl", country: country, destination: "https://\(country).example/", seenAt: seenAt, stale: false,
            kind: kind, experiment: variant == nil ? nil : "x", variant: variant)
    }

    @Test func theFirstShoppersVisitGivesTheFields() {
        var merged = TokenMerge(Self.visit(2_000, .prefetch, country: "be", variant: "a"))
        merged.add(Self.visit(3_000, .shopper, country: "nl"))
        merged.add(Self.visit(4_000, .shopper, country: "de", variant: "b"))
        merged.add(Self.visit(1_000, .bot, country: "fr"))
        let token = merged.token
        #expect(token.country == "nl" && token.variant == nil)
        #expect(token.hits == 2 && token.otherVisits == 2)
        #expect(token.firstSeen == 1_000 && token.lastSeen == 4_000)
    }

    @Test func withoutAShopperTheFirstVisitGivesTheFields() {
        var merged = TokenMerge(Self.visit(2_000, .head, country: "be"))
        merged.add(Self.visit(3_000, .bot, country: "nl"))
        #expect(merged.token.country == "be" && merged.token.hits == 0 && merged.token.otherVisits == 2)
    }
}
