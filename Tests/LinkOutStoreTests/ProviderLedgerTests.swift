import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

/// The payment providers' ledger (schema 11, migration 11) on both stores: an event kept once per id, ids
/// bound first-wins, parked events found by what they wait for, the counts report status shows.
@Suite struct ProviderLedgerTests {
    typealias Kind = ReportingStoreTests.Kind

    func record(_ kind: Kind, eventId: String, outcome: ProviderOutcome = .parked, waitingFor: String? = nil) -> ProviderEventRecord {
        ProviderEventRecord(
            provider: .stripe, eventId: eventId, type: "refund.created", objectId: "re_1", environment: .production, occurredAt: 1,
            receivedAt: 2, outcome: outcome, waitingFor: waitingFor, body: "{}")
    }

    @Test(arguments: Kind.allCases)
    func eventsAreKeptOnceAndFoundByWhatTheyWaitFor(_ kind: Kind) throws {
        let stores = try ReportingStoreTests().stores(kind)
        let store = try stores.open()
        try store.withProviderLedger { (ledger: any ProviderLedger) throws in
            #expect(try ledger.insertEvent(record(kind, eventId: "evt_1", waitingFor: "pi_1")))
            #expect(try !ledger.insertEvent(record(kind, eventId: "evt_1", waitingFor: "pi_1")), "a retry of the same event id")
            #expect(try ledger.insertEvent(record(kind, eventId: "evt_2", waitingFor: "sub_1#start")))
            #expect(try ledger.openEvents(.stripe, waitingFor: ["pi_1"]).map(\.eventId) == ["evt_1"])
            #expect(try ledger.openEvents(.paddle, waitingFor: ["pi_1"]).isEmpty)
            #expect(try ledger.openEvents(nil, waitingFor: nil).map(\.eventId).sorted() == ["evt_1", "evt_2"])
            try ledger.setOutcome(.stripe, eventId: "evt_1", .held, externalPurchaseId: "tok", waitingFor: nil, problem: "why", now: 3)
            #expect(try ledger.openEvents(.stripe, waitingFor: ["pi_1"]).isEmpty)
        }
        let counts = try store.providerEventCounts(limit: 10)
        #expect(counts.count(.stripe, .held) == 1 && counts.count(.stripe, .parked) == 1)
        #expect(counts.open.first { $0.eventId == "evt_1" }?.problem == "why")
    }

    @Test(arguments: Kind.allCases)
    func aBindingStaysWithItsFirstTokenAndGainsItsLineOnce(_ kind: Kind) throws {
        let stores = try ReportingStoreTests().stores(kind)
        let store = try stores.open()
        try store.withProviderLedger { (ledger: any ProviderLedger) throws in
            #expect(try ledger.bind(.stripe, ["cs_1", "sub_1"], externalPurchaseId: "a", lineItemId: nil, now: 1) == ["cs_1", "sub_1"])
            #expect(
                try ledger.bind(.stripe, ["sub_1"], externalPurchaseId: "b", lineItemId: "stripe:in_1", now: 2).isEmpty, "another token's")
            #expect(try ledger.bind(.stripe, ["sub_1"], externalPurchaseId: "a", lineItemId: "stripe:in_1", now: 2) == ["sub_1"])
            #expect(try ledger.bind(.stripe, ["sub_1"], externalPurchaseId: "a", lineItemId: "stripe:in_2", now: 3).isEmpty, "a line once")
            #expect(try ledger.binding(.stripe, "sub_1") == ProviderBinding(externalPurchaseId: "a", lineItemId: "stripe:in_1"))
            #expect(try ledger.binding(.paddle, "sub_1") == nil)
            try ledger.setAddressCountry(.paddle, "add_1", country: "NL", now: 1)
            try ledger.setAddressCountry(.paddle, "add_1", country: "BE", now: 2)
            #expect(try ledger.addressCountry(.paddle, "add_1") == "BE")
        }
    }

    @Test func aSchemaTenFileIsUpgradedToElevenWithItsTokens() throws {
        let path = StoreFixtures.temporaryPath()
        let id = try ReportingStoreTests().record(try SQLiteTokenStore(path: path), ageHours: 1)
        let connection = try SQLiteConnection(path: path, readOnly: false)
        try connection.execute("\(StoreFixtures.undoSchemaEleven) PRAGMA user_version = 10;")
        #expect(throws: (any Error).self) { try connection.execute("SELECT count(*) FROM provider_events") }
        let upgraded = try SQLiteTokenStore(path: path)
        #expect(try upgraded.connection.integer("PRAGMA user_version") == SQLiteTokenStore.schemaVersion)
        let store = try SQLReportingStore(sqlitePath: path)
        try store.withProviderLedger { (ledger: any ProviderLedger) throws in
            #expect(try ledger.token(id) != nil)
            #expect(try ledger.insertEvent(record(.sqlite, eventId: "evt_1")))
        }
    }
}
