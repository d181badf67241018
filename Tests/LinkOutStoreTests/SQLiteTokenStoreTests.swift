import Foundation
import LinkOutCore
@testable import LinkOutStore
import Testing

@Suite struct SQLiteTokenStoreTests {
    @Test func repeatVisitsMergeIntoOneRow() throws {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteTokenStore(path: path)
        let id = "11111111-2222-3333-4444-555555555555"
        // Two visits of one token in the same batch, and a third, earlier-stamped one later.
        try store.commit([.token(StoreFixtures.record(id: id, seenAt: 2_000, stale: true)), .token(StoreFixtures.record(id: id, seenAt: 3_000))])
        try store.commit([.token(StoreFixtures.record(id: id, seenAt: 1_500))])
        let tokens = try StoreFixtures.tokens(in: store)
        #expect(tokens.count == 1)
        let token = try #require(tokens.first)
        #expect(token.hits == 3)
        #expect(token.firstSeen == 1_500)
        #expect(token.lastSeen == 3_000)
        #expect(token.stale, "the first visit's staleness is kept")
        #expect(token.environment == "production")
        #expect(token.tokenType == nil && token.tokenExpirationDate == nil)
    }

    @Test func recordsSurviveReopeningAndExportInFirstSeenOrder() throws {
        let path = StoreFixtures.temporaryPath()
        let ids = (0..<50).map { _ in UUID().uuidString.lowercased() }
        do {
            let store = try SQLiteTokenStore(path: path)
            try store.commit(ids.map { .token(StoreFixtures.record(id: $0)) })
            try store.commit([.token(StoreFixtures.record(id: "SANDBOX_" + ids[0], type: .acquisition))])
            store.close()
        }
        let reader = try SQLiteTokenStore(readingFrom: path)
        let tokens = try StoreFixtures.tokens(in: reader)
        #expect(tokens.map(\.externalPurchaseId) == ids + ["SANDBOX_" + ids[0]])
        #expect(tokens.last?.environment == "sandbox")
        #expect(tokens.last?.tokenType == "ACQUISITION")
        #expect(tokens.last?.tokenExpirationDate == 9_000)
    }

    @Test func untokenedVisitsAreKeptApart() throws {
        let store = try SQLiteTokenStore(path: StoreFixtures.temporaryPath())
        try store.commit([.untokened(UntokenedVisit(link: "nl", country: "nl", destination: "https://a.example.com/", reason: .missingToken, seenAt: 1))])
        #expect(try store.untokenedVisitCount() == 1)
        #expect(try StoreFixtures.tokens(in: store).isEmpty)
    }

    @Test func readingAMissingStoreFailsWithoutCreatingIt() throws {
        let path = StoreFixtures.temporaryPath()
        #expect(throws: StoreError.self) { try SQLiteTokenStore(readingFrom: path) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aNewerSchemaIsRefused() throws {
        let path = StoreFixtures.temporaryPath()
        do {
            let store = try SQLiteTokenStore(path: path)
            store.close()
        }
        let connection = try SQLiteConnection(path: path, readOnly: false)
        try connection.execute("PRAGMA user_version = 99")
        #expect(throws: StoreError.self) { try SQLiteTokenStore(path: path) }
        #expect(throws: StoreError.self) { try SQLiteTokenStore(readingFrom: path) }
    }

    @Test func storeRunsInWALWithFullSync() throws {
        let path = StoreFixtures.temporaryPath()
        let store = try SQLiteTokenStore(path: path)
        try store.commit([.token(StoreFixtures.record())])
        let connection = try SQLiteConnection(path: path, readOnly: true)
        let mode = try connection.prepare("PRAGMA journal_mode")
        #expect(try mode.step())
        #expect(mode.text(0) == "wal")
        _ = store
    }
}
