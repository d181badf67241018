import Foundation
import Testing

@testable import LinkOutCore

/// The payment providers' rules in Core: signatures, exponents, events read into bindings and lines, and
/// the lines made from them.
@Suite("Payment providers' rules")
struct PaymentProviderRulesTests {
    static let secret = "whsec_" + String(repeating: "k", count: 32)
    static let body = Array("{\n  \"id\": \"evt_1\"\n}".utf8)

    // MARK: Signatures

    @Test("every v1 against every secret: a rotation's old and new secret both verify, v0 never does")
    func rotation() {
        let old = "whsec_" + String(repeating: "o", count: 32)
        let header = ProviderSignature.header(body: Self.body, timestamp: 1_700_000_000, secrets: [old, Self.secret], provider: .stripe)
        for secrets in [[Self.secret], [old], ["whsec_other_0000000000", Self.secret]] {
            #expect(
                ProviderSignature.verify(
                    header: header, body: Self.body, secrets: secrets, provider: .stripe, now: 1_700_000_010, toleranceSeconds: 300)
                    == .success(1_700_000_000))
        }
        // Test mode's v0 is a signature of the same bytes, under a scheme linkout does not trust.
        let v0 =
            "t=1700000000,v0="
            + ProviderSignature.signature(body: Self.body, timestamp: 1_700_000_000, secret: Self.secret, provider: .stripe)
        #expect(
            ProviderSignature.verify(
                header: v0, body: Self.body, secrets: [Self.secret], provider: .stripe, now: 1_700_000_000, toleranceSeconds: 300)
                == .failure(.malformed))
    }

    @Test("a changed byte, another secret, a stale or future timestamp, a missing header: each refused by name")
    func refusals() {
        let header = ProviderSignature.header(body: Self.body, timestamp: 1_700_000_000, secrets: [Self.secret], provider: .stripe)
        func verify(
            _ header: String?, body: [UInt8] = PaymentProviderRulesTests.body, now: Int64 = 1_700_000_000
        ) -> Result<Int64, ProviderSignature.Problem> {
            ProviderSignature.verify(header: header, body: body, secrets: [Self.secret], provider: .stripe, now: now, toleranceSeconds: 300)
        }
        #expect(verify(header, body: Self.body + [0x20]) == .failure(.mismatch))
        #expect(verify(header.replacingOccurrences(of: "v1=", with: "v1=0")) == .failure(.mismatch))
        #expect(verify(header, now: 1_700_000_301) == .failure(.stale))
        #expect(verify(header, now: 1_699_999_699) == .failure(.stale), "a signature from the future stays fresh too long")
        #expect(verify(header, now: 1_700_000_300) == .success(1_700_000_000))
        #expect(verify(nil) == .failure(.missing))
        #expect(verify("v1=abc") == .failure(.malformed))
        #expect(verify("t=12x,v1=abc") == .failure(.malformed))
    }

    @Test("Paddle signs ts:body and separates with semicolons")
    func paddle() {
        let secret = "pdl_ntfset_01abcdefgh_ijkl"
        let header = ProviderSignature.header(body: Self.body, timestamp: 1_700_000_000, secrets: [secret], provider: .paddle)
        #expect(header.hasPrefix("ts=1700000000;h1="))
        #expect(
            ProviderSignature.verify(
                header: header, body: Self.body, secrets: [secret], provider: .paddle, now: 1_700_000_001, toleranceSeconds: 5)
                == .success(1_700_000_000))
        // Stripe's scheme on Paddle's path verifies nothing.
        let stripe = ProviderSignature.header(body: Self.body, timestamp: 1_700_000_000, secrets: [secret], provider: .stripe)
        #expect(
            ProviderSignature.verify(
                header: stripe, body: Self.body, secrets: [secret], provider: .paddle, now: 1_700_000_000, toleranceSeconds: 5)
                == .failure(.malformed))
    }

    // MARK: Amounts

    @Test("the provider's exponent, not ISO 4217's")
    func exponents() {
        #expect(ProviderCurrency.milli(500, currency: "JPY", provider: .stripe) == 500_000)
        #expect(ProviderCurrency.milli(299, currency: "EUR", provider: .stripe) == 2990)
        #expect(ProviderCurrency.milli(1230, currency: "KWD", provider: .stripe) == 1230)
        // ISO gives ISK no decimals; Stripe two (in multiples of 100): 500 kr is 50000.
        #expect(ProviderCurrency.milli(50000, currency: "ISK", provider: .stripe) == 500_000)
        #expect(ProviderCurrency.milli(12345, currency: "HUF", provider: .stripe) == 123_450)
        #expect(ProviderCurrency.milli(12345, currency: "TWD", provider: .stripe) == 123_450)
        #expect(ProviderCurrency.milli(1100, currency: "KRW", provider: .paddle) == 1_100_000)
        #expect(ProviderCurrency.milli(1100, currency: "CLP", provider: .paddle) == 11000)
        #expect(ProviderCurrency.milli(.max, currency: "JPY", provider: .stripe) == nil)
    }

    // MARK: Events

    static func stripe(_ type: String, _ object: String, live: Bool = true) -> [UInt8] {
        Array(
            #"{"id":"evt_9","object":"event","type":"\#(type)","created":1700000000,"livemode":\#(live),"data":{"object":\#(object)}}"#.utf8
        )
    }

    @Test("a paid session is a one-time buy, bound by its client_reference_id with its payment intent")
    func session() throws {
        let event = try StripeEvent.read(
            Self.stripe(
                "checkout.session.completed",
                """
                {"id":"cs_1","mode":"payment","payment_status":"paid","client_reference_id":"SANDBOX_4f3d","amount_total":1210,"currency":"eur",
                 "total_details":{"amount_tax":210},"customer_details":{"address":{"country":"NL"}},"payment_intent":"pi_1",
                 "metadata":{"productIdentifier":"gems.500"}}
                """, live: false)
        ).get()
        #expect(event.live == false && event.externalPurchaseId == "SANDBOX_4f3d" && event.binds == ["cs_1", "pi_1"])
        #expect(
            event.effect
                == .sale(
                    ProviderSale(
                        lineItemId: "stripe:cs_1", creationDate: 1_700_000_000_000, productIdentifier: "gems.500", currency: "EUR",
                        amountTaxInclusive: 12100, taxAmount: 2100, countryAlpha2: "NL")))
        // A delayed payment method: only bindings until async_payment_succeeded.
        let unpaid = try StripeEvent.read(
            Self.stripe("checkout.session.completed", #"{"id":"cs_2","mode":"payment","payment_status":"unpaid","currency":"eur"}"#)
        ).get()
        #expect(unpaid.effect == .bind)
    }

    @Test("a delayed payment's success makes the line its unpaid session did not, under the same id; its failure nothing")
    func delayedPayment() throws {
        let session =
            #"{"id":"cs_3","mode":"payment","payment_status":"unpaid","client_reference_id":"x","amount_total":500,"currency":"eur","customer_details":{"address":{"country":"BE"}},"payment_intent":"pi_3"}"#
        let succeeded = try StripeEvent.read(Self.stripe("checkout.session.async_payment_succeeded", session)).get()
        guard case .sale(let sale) = succeeded.effect else {
            Issue.record("a sale: \(succeeded.effect)")
            return
        }
        #expect(sale.lineItemId == "stripe:cs_3" && sale.amountTaxInclusive == 5000 && sale.countryAlpha2 == "BE")
        let failed = try StripeEvent.read(Self.stripe("checkout.session.async_payment_failed", session)).get()
        guard case .ignore = failed.effect else {
            Issue.record("nothing sold")
            return
        }
    }

    @Test("a trial's zero invoice starts the subscription; an invoice of no subscription is not a checkout's")
    func trialAndOneOffInvoices() throws {
        let trial = try StripeEvent.read(
            Self.stripe(
                "invoice.paid",
                """
                {"id":"in_t","billing_reason":"subscription_create","currency":"usd","total":0,"total_excluding_tax":0,"subscription":"sub_t",
                 "customer_address":{"country":"US"},"lines":{"data":[{"period":{"start":1700000000,"end":1701209600}}]}}
                """)
        ).get()
        guard case .sale(let start) = trial.effect else {
            Issue.record("a sale: \(trial.effect)")
            return
        }
        #expect(start.amountTaxInclusive == 0 && start.subscription?.event == .subscriptionStart)
        let oneOff = try StripeEvent.read(
            Self.stripe("invoice.paid", #"{"id":"in_o","billing_reason":"manual","currency":"usd","total":100}"#)
        ).get()
        guard case .ignore = oneOff.effect else {
            Issue.record("not a subscription's: \(oneOff.effect)")
            return
        }
    }

    @Test("invoice.paid before and after basil: the subscription, its metadata and the tax from their places")
    func invoices() throws {
        let basil = try StripeEvent.read(
            Self.stripe(
                "invoice.paid",
                """
                {"id":"in_1","billing_reason":"subscription_cycle","currency":"eur","total":999,"total_excluding_tax":826,
                 "customer_address":{"country":"DE"},"status_transitions":{"paid_at":1700000100},
                 "parent":{"type":"subscription_details","subscription_details":{"subscription":"sub_1","metadata":{"externalPurchaseId":"abc"}}},
                 "lines":{"data":[{"period":{"start":1700000000,"end":1702592000},"quantity":1}]}}
                """)
        ).get()
        let before = try StripeEvent.read(
            Self.stripe(
                "invoice.paid",
                """
                {"id":"in_1","billing_reason":"subscription_cycle","currency":"eur","total":999,"tax":173,"subscription":"sub_1",
                 "subscription_details":{"metadata":{"externalPurchaseId":"abc"}},"payment_intent":"pi_9",
                 "customer_address":{"country":"DE"},"status_transitions":{"paid_at":1700000100},
                 "lines":{"data":[{"period":{"start":1700000000,"end":1702592000},"quantity":1}]}}
                """)
        ).get()
        for event in [basil, before] {
            #expect(event.externalPurchaseId == "abc" && event.findBy == ["sub_1", "in_1"])
            guard case .sale(let sale) = event.effect else {
                Issue.record("not a sale: \(event.effect)")
                continue
            }
            #expect(sale.subscription == .init(event: .renewal, subscriptionId: "sub_1", start: 1_700_000_000_000, end: 1_702_592_000_000))
            #expect(sale.amountTaxInclusive == 9990 && sale.taxAmount == 1730 && sale.creationDate == 1_700_000_100_000)
        }
        #expect(before.binds == ["in_1", "sub_1", "pi_9"], "pre-basil invoices name their payment intent")
    }

    @Test("refunds: only succeeded ones, of a payment intent; lost disputes are refunds, won ones nothing")
    func refunds() throws {
        let pending = try StripeEvent.read(
            Self.stripe("refund.created", #"{"id":"re_1","status":"pending","amount":5,"currency":"eur","payment_intent":"pi_1"}"#)
        ).get()
        guard case .ignore = pending.effect else {
            Issue.record("a pending refund refunds nothing yet")
            return
        }
        let lost = try StripeEvent.read(
            Self.stripe("charge.dispute.closed", #"{"id":"dp_1","status":"lost","amount":500,"currency":"jpy","payment_intent":"pi_1"}"#)
        ).get()
        #expect(
            lost.effect
                == .refund(
                    ProviderRefund(
                        lineItemId: "stripe:dp_1", creationDate: 1_700_000_000_000, refundOf: "pi_1", currency: "JPY",
                        amountTaxInclusive: 500_000, taxAmount: nil)))
        let won = try StripeEvent.read(
            Self.stripe("charge.dispute.closed", #"{"id":"dp_1","status":"won","amount":500,"currency":"jpy","payment_intent":"pi_1"}"#)
        ).get()
        guard case .ignore = won.effect else {
            Issue.record("a dispute won takes nothing back")
            return
        }
    }

    @Test("a malformed event is named by what it lacks")
    func malformed() {
        #expect(throws: ProviderEventError.self) { try StripeEvent.read(Array("[]".utf8)).get() }
        #expect(throws: ProviderEventError("data.object.amount_total is missing")) {
            try StripeEvent.read(
                Self.stripe("checkout.session.completed", #"{"id":"cs_1","mode":"payment","payment_status":"paid","currency":"eur"}"#)
            ).get()
        }
        #expect(throws: ProviderEventError("no occurred_at time")) {
            try PaddleEvent.read(Array(#"{"event_id":"evt_1","event_type":"x","data":{}}"#.utf8)).get()
        }
    }

    @Test("Paddle: origin decides the kind; reversed chargebacks go to a person")
    func paddleEvents() throws {
        func transaction(_ origin: String, subscription: String?) throws -> ProviderEvent {
            let sub = subscription.map { #""\#($0)""# } ?? "null"
            return try PaddleEvent.read(
                Array(
                    """
                    {"event_id":"evt_1","event_type":"transaction.completed","occurred_at":"2026-01-02T03:04:05.678901Z","data":{
                     "id":"txn_1","origin":"\(origin)","subscription_id":\(sub),"currency_code":"KRW","address_id":"add_1",
                     "billed_at":"2026-01-02T03:04:05Z","custom_data":{"externalPurchaseId":"x"},
                     "billing_period":{"starts_at":"2026-01-02T00:00:00Z","ends_at":"2026-02-02T00:00:00Z"},
                     "items":[{"quantity":3}],"details":{"totals":{"total":"11000","tax":"1000"}}}}
                    """.utf8)
            ).get()
        }
        guard case .sale(let once) = try transaction("web", subscription: nil).effect else {
            Issue.record("a sale")
            return
        }
        #expect(once.subscription == nil && once.quantity == 3 && once.amountTaxInclusive == 11_000_000 && once.addressId == "add_1")
        #expect(once.creationDate == UTCDate.parse("2026-01-02T03:04:05Z"))
        guard case .sale(let start) = try transaction("web", subscription: "sub_1").effect else {
            Issue.record("a sale")
            return
        }
        #expect(start.subscription?.event == .subscriptionStart)
        guard case .sale(let renewal) = try transaction("subscription_recurring", subscription: "sub_1").effect else {
            Issue.record("a sale")
            return
        }
        #expect(renewal.subscription?.event == .renewal)
        guard case .review = try transaction("subscription_charge", subscription: "sub_1").effect else {
            Issue.record("unmapped origins go to a person")
            return
        }
        #expect(PaddleEvent.rfc3339("2026-01-02T03:04:05.678901Z") == UTCDate.parse("2026-01-02T03:04:05Z")! + 678)
        #expect(PaddleEvent.rfc3339("2026-01-02T03:04:05+02:00") == nil)
    }

    // MARK: Lines

    static let bought = LineItem(
        lineItemId: "stripe:cs_1", kind: .oneTimeBuy, creationDate: 1_700_000_000_000, productIdentifier: "p", quantity: 1,
        pricingCurrency: "EUR", reportingCurrency: "EUR", amountTaxExclusive: 10000, amountTaxInclusive: 12100,
        netAmountTaxExclusive: 10000, taxAmount: 2100, taxCountry: "NLD")

    @Test("a refund without a tax split takes the bought line's share, rounded to the cent; a full one its amounts")
    func refundTax() {
        func refund(_ amount: Int64) -> ProviderLines.Outcome {
            ProviderLines.refund(
                ProviderRefund(
                    lineItemId: "stripe:re_1", creationDate: 1_700_000_100_000, refundOf: "pi_1", currency: "EUR",
                    amountTaxInclusive: amount, taxAmount: nil),
                of: Self.bought)
        }
        guard case .line(let half) = refund(6050), case .line(let odd) = refund(1000), case .line(let full) = refund(12100) else {
            Issue.record("refunds within the bought amount make lines")
            return
        }
        #expect(
            half.taxAmount == 1050 && half.amountTaxExclusive == 5000 && half.referenceLineItemId == "stripe:cs_1"
                && half.taxCountry == "NLD")
        // 1000 × 2100 / 12100 = 173.55…: 170 (whole cents of milli-units).
        #expect(odd.taxAmount == 170 && odd.amountTaxExclusive == 830)
        #expect(full.taxAmount == 2100 && full.amountTaxExclusive == 10000)
        guard case .hold = refund(12110) else {
            Issue.record("more than was bought goes to a person")
            return
        }
    }

    @Test("paid days from the subscription's start, or from the end of its free first period")
    func paidDays() {
        let day: Int64 = 86_400_000
        var start = Self.bought
        start.subscriptionStartDate = 0
        start.subscriptionEndDate = 14 * day
        #expect(ProviderLines.paidDays(before: 44 * day, start: start) == 44)
        start.amountTaxInclusive = 0
        #expect(ProviderLines.paidDays(before: 44 * day, start: start) == 30, "a trial's days are not paid")
    }

    @Test("no product, an unknown currency or no country: the line waits or is held, with why")
    func saleProblems() {
        let sale = ProviderSale(
            lineItemId: "stripe:cs_1", creationDate: 1, currency: "EUR", amountTaxInclusive: 100, taxAmount: 0, countryAlpha2: "NL")
        guard case .wait(let why) = ProviderLines.sale(sale, country: "NL", defaultProductIdentifier: nil, start: nil) else {
            Issue.record("no product")
            return
        }
        #expect(why.contains("defaultProductIdentifier"))
        guard case .line(let line) = ProviderLines.sale(sale, country: "NL", defaultProductIdentifier: "d", start: nil) else {
            Issue.record("a line")
            return
        }
        #expect(line.productIdentifier == "d" && line.taxCountry == "NLD")
        var kwd = sale
        kwd.currency = "KWD"
        guard case .hold = ProviderLines.sale(kwd, country: "KW", defaultProductIdentifier: "d", start: nil) else {
            Issue.record("no rate")
            return
        }
        guard case .hold = ProviderLines.sale(sale, country: nil, defaultProductIdentifier: "d", start: nil) else {
            Issue.record("no country")
            return
        }
    }

    @Test("test payments pair with SANDBOX tokens, live ones with production tokens")
    func environments() {
        #expect(ProviderLines.environmentMismatch(live: true, externalPurchaseId: "4f3d") == nil)
        #expect(ProviderLines.environmentMismatch(live: false, externalPurchaseId: "SANDBOX_4f3d") == nil)
        #expect(ProviderLines.environmentMismatch(live: false, externalPurchaseId: "4f3d")?.contains("never sent") == true)
        #expect(ProviderLines.environmentMismatch(live: true, externalPurchaseId: "SANDBOX_4f3d") != nil)
    }

    @Test("every externalPurchaseId, SANDBOX_ ones too, is a value a Payment Link keeps")
    func paymentLinkRule() {
        for id in [
            "3f2c7b1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f", "SANDBOX_3f2c7b1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f",
            "SANDBOX-3f2c7b1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f",
        ] {
            #expect(ExternalPurchaseID.isValid(id) && CheckoutParameters.isPaymentLinkReference(id))
        }
        #expect(
            !CheckoutParameters.isPaymentLinkReference("a.b")
                && !CheckoutParameters.isPaymentLinkReference(String(repeating: "a", count: 201)))
    }
}
