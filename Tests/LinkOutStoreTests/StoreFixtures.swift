import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutStore

enum StoreFixtures {
    /// When the tests' writer batches are applied (Unix ms, 2025-12-01): a time of the test's, so what is
    /// kept of them depends on nothing else.
    static let appliedAt: Int64 = 1_764_547_200_000

    static func temporaryPath() -> String {
        NSTemporaryDirectory() + "linkout-store-\(UUID().uuidString)/store.sqlite"
    }

    static func tokens(in store: any TokenStore) throws -> [StoredToken] {
        var tokens: [StoredToken] = []
        try store.forEachToken { tokens.append($0) }
        return tokens
    }

    /// A prefetch or bot before the shopper's tap may have seen another country or destination: the
    /// token's fields are its first shopper's visit's, within a batch and across batches.
    static func expectShopperFieldsWin(_ store: any TokenStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let early = "aaaaaaaa-2222-3333-4444-555555555555", split = "bbbbbbbb-2222-3333-4444-555555555555"
        try store.commit([
            .token(
                TokenBuilder.record(
                    id: early, seenAt: 1_000, kind: .bot, experiment: "x", variant: "a", country: "nl", destination: "https://nl.example/")),
            .token(TokenBuilder.record(id: split, seenAt: 1_000, kind: .prefetch, country: "nl", destination: "https://nl.example/")),
        ])
        try store.commit([
            .token(TokenBuilder.record(id: early, seenAt: 2_000, kind: .prefetch, country: "nl", destination: "https://nl.example/")),
            .token(TokenBuilder.record(id: early, seenAt: 3_000, country: "be", destination: "https://be.example/")),
            .token(TokenBuilder.record(id: early, seenAt: 4_000, country: "nl", destination: "https://nl.example/")),
            .token(TokenBuilder.record(id: split, seenAt: 2_000, kind: .head, country: "nl", destination: "https://nl.example/")),
        ])
        let tokens = Dictionary(uniqueKeysWithValues: try StoreFixtures.tokens(in: store).map { ($0.externalPurchaseId, $0) })
        let shopper = try #require(tokens[early], sourceLocation: sourceLocation)
        #expect(shopper.country == "be" && shopper.destination == "https://be.example/", sourceLocation: sourceLocation)
        #expect(shopper.experiment == nil && shopper.variant == nil, sourceLocation: sourceLocation)
        #expect(shopper.hits == 2 && shopper.otherVisits == 2 && shopper.firstSeen == 1_000, sourceLocation: sourceLocation)
        let noShopper = try #require(tokens[split], sourceLocation: sourceLocation)
        #expect(noShopper.country == "nl" && noShopper.hits == 0 && noShopper.otherVisits == 2, sourceLocation: sourceLocation)
    }

    /// Two visits of one token in the same batch, and a third, earlier-stamped one later: one token, whose
    /// times span all three and whose other fields are the first visit's. Both stores must do this.
    static func expectRepeatVisitsMerged(_ store: any TokenStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let id = "11111111-2222-3333-4444-555555555555"
        try store.commit([
            .token(TokenBuilder.record(id: id, seenAt: 2_000, stale: true)), .token(TokenBuilder.record(id: id, seenAt: 3_000)),
        ])
        try store.commit([.token(TokenBuilder.record(id: id, seenAt: 1_500))])
        let tokens = try StoreFixtures.tokens(in: store)
        #expect(tokens.count == 1, sourceLocation: sourceLocation)
        let token = try #require(tokens.first, sourceLocation: sourceLocation)
        #expect(token.hits == 3, sourceLocation: sourceLocation)
        #expect(token.firstSeen == 1_500 && token.lastSeen == 3_000, sourceLocation: sourceLocation)
        #expect(token.stale, "the first visit's staleness is kept", sourceLocation: sourceLocation)
        #expect(token.environment == "production", sourceLocation: sourceLocation)
        #expect(token.tokenType == nil && token.tokenExpirationDate == nil, sourceLocation: sourceLocation)
    }

    /// Takes a store back to schema 6's shape: undoes version 8, then drops what version 7 added (the first
    /// shoppers, the hours, the line items' arrival index).
    static let undoSchemaSeven = """
        \(undoSchemaEight)
        DROP TABLE visit_hours;
        DROP INDEX line_items_received;
        ALTER TABLE report_tokens DROP COLUMN shopper_visit;
        ALTER TABLE report_tokens DROP COLUMN shopper_seen;
        ALTER TABLE report_tokens DROP COLUMN shopper_link;
        ALTER TABLE report_tokens DROP COLUMN experiment;
        ALTER TABLE report_tokens DROP COLUMN variant;
        ALTER TABLE report_sync DROP COLUMN shoppers_from;
        ALTER TABLE report_sync DROP COLUMN shoppers_until;
        """

    /// Schema 8 taken back: the purchases' tally, the saved counts and the refusals' hours dropped, the line
    /// items' arrival index back.
    static let undoSchemaEight = """
        \(undoSchemaNine)
        DROP TABLE purchase_buckets;
        DROP TABLE dashboard_counts;
        DROP TABLE refusal_hours;
        \(DashboardStore.lineItemsByArrival)
        """

    /// Schema 9 taken back: the reports' failures and last send dropped.
    static let undoSchemaNine = """
        \(undoSchemaTen)
        ALTER TABLE reports DROP COLUMN failures;
        ALTER TABLE reports DROP COLUMN last_attempt_at;
        ALTER TABLE reports DROP COLUMN last_status;
        """

    /// Schema 10 taken back: the tokens' country and the month indexes dropped.
    static let undoSchemaTen = """
        \(undoSchemaEleven)
        DROP INDEX report_tokens_created;
        DROP INDEX line_items_created;
        DROP INDEX untokened_visits_seen;
        ALTER TABLE report_tokens DROP COLUMN country;
        """

    /// Schema 11 taken back: the payment providers' events, bindings and addresses dropped.
    static let undoSchemaEleven = """
        \(undoSchemaTwelve)
        DROP TABLE provider_events;
        DROP TABLE provider_bindings;
        DROP TABLE provider_addresses;
        """

    /// Schema 12 taken back: the reports' refusals and automatic retry, and the notification history's
    /// reading, dropped.
    static let undoSchemaTwelve = """
        DROP INDEX reports_refused;
        ALTER TABLE reports DROP COLUMN refusals;
        ALTER TABLE reports DROP COLUMN retry_at;
        DROP TABLE notification_history;
        """
}
