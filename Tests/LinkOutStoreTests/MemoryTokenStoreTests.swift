import LinkOutCore
import LinkOutStore
import LinkOutTestSupport
import Testing

/// The in-memory store must merge as the real stores do: the same shared checks.
@Suite struct MemoryTokenStoreTests {
    @Test func repeatVisitsMergeIntoOneToken() throws {
        try StoreFixtures.expectRepeatVisitsMerged(MemoryTokenStore())
    }

    @Test func aTokensFieldsAreItsFirstShoppersVisits() throws {
        try StoreFixtures.expectShopperFieldsWin(MemoryTokenStore())
    }

    @Test func botsAreOtherVisitsAndExperimentsAreKept() throws {
        let store = MemoryTokenStore()
        let id = "cccccccc-2222-3333-4444-555555555555"
        try store.commit([
            .token(TokenBuilder.record(id: id, seenAt: 1_000, kind: .shopper, experiment: "price", variant: "b")),
            .token(TokenBuilder.record(id: id, seenAt: 2_000, kind: .bot)),
        ])
        let token = try #require(try StoreFixtures.tokens(in: store).first)
        #expect(token.hits == 1 && token.otherVisits == 1)
        #expect(token.experiment == "price" && token.variant == "b")
    }
}
