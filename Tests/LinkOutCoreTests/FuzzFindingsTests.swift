import Testing

@testable import LinkOutCore

/// Inputs the fuzz targets (`fuzz/`) found to break a rule, kept as they were found, so the fix stays.
@Suite("Fuzz findings")
struct FuzzFindingsTests {
    /// fuzz-payment-webhook (an input written with the target, which it crashed): a Stripe event's `created` multiplied into milliseconds overflowed Int64 and
    /// trapped, taking the gateway down on a signed webhook. Times outside 1970...9999 are now no time.
    @Test("a Stripe event with a created time past Int64's milliseconds is refused, not a crash")
    func stripeCreatedOverflow() {
        let body = Array(
            #"{"id":"evt_1","type":"customer.created","created":9999999999999999,"livemode":true,"data":{"object":{"id":"x"}}}"#.utf8)
        guard case .failure(let error) = StripeEvent.read(body) else {
            Issue.record("a created time in year 316,889,355 read as an event")
            return
        }
        #expect(error.message.contains("created"))
    }

    @Test("a refund's, an invoice's and its lines' times out of range fall back or refuse; sums and differences that overflow refuse")
    func stripeArithmetic() throws {
        let refund = Array(
            #"{"id":"evt_2","type":"refund.created","created":1767225600,"livemode":true,"data":{"object":{"id":"re_1","status":"succeeded","payment_intent":"pi_1","currency":"eur","amount":100,"created":-9223372036854775808}}}"#
                .utf8)
        let event = try StripeEvent.read(refund).get()
        guard case .refund(let line) = event.effect else {
            Issue.record("not a refund: \(event.effect)")
            return
        }
        #expect(line.creationDate == 1_767_225_600_000)

        func invoice(_ members: String) -> [UInt8] {
            Array(
                #"{"id":"evt_3","type":"invoice.paid","created":1767225600,"livemode":true,"data":{"object":{"id":"in_1","billing_reason":"subscription_cycle","currency":"eur","subscription":"sub_1","lines":{"data":[{"period":{"start":1767225600,"end":1769904000}}]},\#(members)}}}"#
                    .utf8)
        }
        #expect(throws: Never.self) { _ = try StripeEvent.read(invoice(#""total":999,"total_excluding_tax":826"#)).get() }
        #expect(
            StripeEvent.read(invoice(#""total":9223372036854775807,"total_excluding_tax":-9223372036854775808"#)).failureMessage?.contains(
                "total_excluding_tax") == true)
        #expect(
            StripeEvent.read(invoice(#""total":999,"total_taxes":[{"amount":9223372036854775807},{"amount":9223372036854775807}]"#))
                .failureMessage?.contains("total_taxes") == true)
    }

    @Test("Adaptive Pricing with a tax larger than the total or a presentment amount past Int64 refuses")
    func stripePresentment() {
        func session(_ amount: String, tax: Int) -> [UInt8] {
            Array(
                #"{"id":"evt_4","type":"checkout.session.completed","created":1767225600,"livemode":true,"data":{"object":{"id":"cs_1","mode":"payment","payment_status":"paid","currency":"eur","amount_total":100,"total_details":{"amount_tax":\#(tax)},"presentment_details":{"presentment_currency":"usd","presentment_amount":\#(amount)}}}}"#
                    .utf8)
        }
        #expect(StripeEvent.read(session("9223372036854775807", tax: 100)).failureMessage?.contains("presentment_amount") == true)
        #expect(StripeEvent.read(session("120", tax: 1000)).failureMessage?.contains("presentment_amount") == true)
        #expect((try? StripeEvent.read(session("120", tax: 20)).get()) != nil)
    }
}

private extension Result where Failure == ProviderEventError {
    var failureMessage: String? {
        if case .failure(let error) = self { return error.message }
        return nil
    }
}
