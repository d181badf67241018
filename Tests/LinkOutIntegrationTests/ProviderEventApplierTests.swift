import Foundation
import LinkOutCore
import LinkOutStore
import LinkOutTestSupport
import Testing

@testable import LinkOutServer

/// What the intake's sweep does with parked and waiting events, driven directly on a SQLite store with a
/// clock of its own: a binding that never comes, a product configured later, a token recorded later.
@Suite struct ProviderEventApplierTests {
    typealias E = ProviderEvents
    static let now = TokenBuilder.nowMs

    func store() throws -> (TemporaryFolder, SQLiteTokenStore, SQLReportingStore) {
        let folder = TemporaryFolder()
        let writer = try SQLiteTokenStore(path: folder.file("store.sqlite"))
        return (folder, writer, try SQLReportingStore(sqlitePath: folder.file("store.sqlite")))
    }

    func record(_ writer: SQLiteTokenStore) throws -> String {
        let id = UUID().uuidString.lowercased()
        let token = ExternalPurchaseToken(
            appAppleId: 1234567890, bundleId: "com.example", tokenCreationDate: Self.now - 60_000, externalPurchaseId: id)
        try writer.commit([
            .token(TokenRecord(token: token, link: "nl", country: "nl", destination: "https://a.example/", seenAt: Self.now, stale: false))
        ])
        return id
    }

    func applier(defaultProduct: String? = nil) -> ProviderEventApplier {
        var stripe = PaymentProviderSettings(provider: .stripe, path: "/webhooks/stripe", secrets: [E.stripeSecret])
        stripe.defaultProductIdentifier = defaultProduct
        return ProviderEventApplier(settings: PaymentProvidersSettings(providers: [stripe]))
    }

    func take(_ body: Data, _ applier: ProviderEventApplier, _ store: SQLReportingStore, at now: Int64 = now) throws -> ProviderOutcome {
        let event = try ProviderEventApplier.read(Array(body), provider: .stripe).get()
        return try store.withProviderLedger { try applier.take(event, body: Array(body), ledger: $0, now: now) }.0.outcome
    }

    @Test func aRefundWhoseSaleNeverCameIsUnmatchedAfterThreeDays() throws {
        let (_, _, store) = try store()
        let applier = applier()
        #expect(try take(E.stripe("refund.created", E.refund("re_1", paymentIntent: "pi_never", amount: 100)), applier, store) == .parked)
        let day: Int64 = 86_400_000
        #expect(try store.withProviderLedger { try applier.sweep(ledger: $0, now: Self.now + 2 * day) }.isEmpty, "still within its wait")
        let swept = try store.withProviderLedger { try applier.sweep(ledger: $0, now: Self.now + 3 * day + 1) }
        #expect(swept.values.map(\.outcome) == [.unmatched])
        #expect(swept.values.first?.problem?.contains("waited 3 days for pi_never") == true)
    }

    @Test func aLineWaitingForItsProductIsTakenOnceOneIsConfigured() throws {
        let (_, writer, store) = try store()
        let id = try record(writer)
        let session = E.stripe("checkout.session.completed", E.session("cs_w1", reference: id, total: 299, tax: 52, paymentIntent: "pi_w1"))
        #expect(try take(session, applier(), store) == .waiting)
        #expect(try store.withProviderLedger { try applier().sweep(ledger: $0, now: Self.now) }.isEmpty, "nothing changed yet")
        let swept = try store.withProviderLedger { try applier(defaultProduct: "gems.default").sweep(ledger: $0, now: Self.now) }
        #expect(swept.values.map(\.outcome) == [.taken] && swept.values.first?.changed == true)
        #expect(
            try store.withProviderLedger { try $0.lineItem(externalPurchaseId: id, lineItemId: "stripe:cs_w1") }?.productIdentifier
                == "gems.default")
    }

    @Test func anEventForATokenNotYetRecordedIsTakenOnceItIs() throws {
        let (_, writer, store) = try store()
        let id = UUID().uuidString.lowercased()
        let session = E.stripe(
            "checkout.session.completed",
            E.session(
                "cs_t1", reference: id, total: 299, tax: 52, paymentIntent: "pi_t1",
                metadata: ["productIdentifier": "gems.100"]))
        #expect(try take(session, applier(), store) == .parked)
        let token = ExternalPurchaseToken(
            appAppleId: 1234567890, bundleId: "com.example", tokenCreationDate: Self.now - 60_000, externalPurchaseId: id)
        try writer.commit([
            .token(TokenRecord(token: token, link: "nl", country: "nl", destination: "https://a.example/", seenAt: Self.now, stale: false))
        ])
        let swept = try store.withProviderLedger { try applier().sweep(ledger: $0, now: Self.now) }
        #expect(swept.values.map(\.outcome) == [.taken])
    }
}
