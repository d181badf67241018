/// Stripe's events, read into `ProviderEvent`s. Field names follow API `2025-03-31.basil` and later, with
/// the earlier places read too (an event's shape follows the endpoint's `api_version`):
///
/// - `checkout.session.completed` with `payment_status: paid` (or `.async_payment_succeeded`) and
///   `mode: payment`: a one-time buy, line `stripe:cs_…`. A session binds its payment intent, subscription
///   and first invoice to the token named by `client_reference_id` (or `metadata.externalPurchaseId`).
/// - `invoice.paid`: a subscription's line `stripe:in_…`, by `billing_reason` (`subscription_create`,
///   `subscription_cycle`, `subscription_update`); its period from the invoice's lines, not `period_*`
///   (that is the previous period). The subscription is `parent.subscription_details.subscription`
///   (pre-basil `subscription`); its metadata (`subscription_data.metadata` at checkout) travels in
///   `parent.subscription_details.metadata` (pre-basil `subscription_details.metadata`).
/// - `invoice_payment.paid` (basil on): binds the payment intent to its invoice, since basil took
///   `payment_intent` off the invoice and refunds name only the payment intent.
/// - `refund.created` / `refund.updated` with `status: succeeded`: a refund, line `stripe:re_…`.
/// - `charge.dispute.closed` with `status: lost`: a refund (Apple counts chargebacks as refunds), line
///   `stripe:dp_…`. A dispute won needs nothing: nothing was reported for it.
///
/// Everything else is taken and ignored (answered 200 so that Stripe stops sending it).
public enum StripeEvent {
    public static func read(_ body: [UInt8]) -> Result<ProviderEvent, ProviderEventError> {
        let json: JSONValue
        do { json = try JSONValue.parse(body) } catch { return .failure(ProviderEventError("the body is not JSON: \(error)")) }
        guard let id = json.string("id"), !id.isEmpty else { return .failure(ProviderEventError("no event id (id)")) }
        guard let type = json.string("type"), !type.isEmpty else { return .failure(ProviderEventError("no event type (type)")) }
        guard let created = json.unixSecondsAsMs("created") else {
            return .failure(ProviderEventError("no created time (created), or not a Unix time in seconds"))
        }
        guard let object = json.at("data.object"), case .object = object else { return .failure(ProviderEventError("no data.object")) }
        let live = json.at("livemode")?.boolValue ?? object.at("livemode")?.boolValue
        guard let live else { return .failure(ProviderEventError("no livemode")) }
        let objectId = object.string("id") ?? ""
        var event = ProviderEvent(
            provider: .stripe, eventId: id, type: type, live: live, occurredAt: created, objectId: objectId, effect: .ignore(""))
        do {
            try read(object, into: &event)
        } catch let error as ProviderEventError {
            return .failure(error)
        } catch {
            return .failure(ProviderEventError("\(error)"))
        }
        return .success(event)
    }

    private static func read(_ object: JSONValue, into event: inout ProviderEvent) throws {
        switch event.type {
        case "checkout.session.completed", "checkout.session.async_payment_succeeded", "checkout.session.async_payment_failed":
            try session(object, into: &event)
        case "invoice.paid":
            try invoice(object, into: &event)
        case "invoice_payment.paid":
            let invoice = try required(object.string("invoice"), "data.object.invoice")
            event.findBy = [invoice]
            if let intent = object.string("payment.payment_intent") {
                event.binds = [intent]
                event.effect = .bind
            } else {
                event.effect = .ignore("an invoice payment without a payment intent")
            }
        case "refund.created", "refund.updated":
            let status = object.string("status") ?? ""
            guard status == "succeeded" else {
                event.effect = .ignore("refund status \(status): a refund counts once it succeeded")
                return
            }
            guard let intent = object.string("payment_intent") else {
                event.effect = .ignore("a refund of a charge without a payment intent: not a checkout's")
                return
            }
            let currency = try self.currency(object)
            event.findBy = [intent]
            event.effect = .refund(
                ProviderRefund(
                    lineItemId: PaymentProvider.stripe.lineItemPrefix + event.objectId,
                    creationDate: object.unixSecondsAsMs("created") ?? event.occurredAt,
                    refundOf: intent, currency: currency,
                    amountTaxInclusive: try milli(object.int64("amount"), "data.object.amount", currency), taxAmount: nil))
        case "charge.dispute.closed":
            let status = object.string("status") ?? ""
            guard status == "lost" else {
                event.effect = .ignore("dispute closed \(status): only a lost dispute takes money back")
                return
            }
            guard let intent = object.string("payment_intent") else {
                event.effect = .ignore("a dispute of a charge without a payment intent: not a checkout's")
                return
            }
            let currency = try self.currency(object)
            event.findBy = [intent]
            event.effect = .refund(
                ProviderRefund(
                    lineItemId: PaymentProvider.stripe.lineItemPrefix + event.objectId, creationDate: event.occurredAt, refundOf: intent,
                    currency: currency,
                    amountTaxInclusive: try milli(object.int64("amount"), "data.object.amount", currency), taxAmount: nil))
        default:
            event.effect = .ignore("linkout does not read \(event.type) events")
        }
    }

    private static func session(_ session: JSONValue, into event: inout ProviderEvent) throws {
        event.externalPurchaseId =
            nonEmpty(session.string("client_reference_id")) ?? nonEmpty(session.string("metadata.externalPurchaseId"))
        let ids = ["payment_intent", "subscription", "invoice"].compactMap { session.string($0) }
        event.binds = [event.objectId] + ids
        let mode = session.string("mode") ?? ""
        let paid = session.string("payment_status") ?? ""
        switch (event.type, mode) {
        case ("checkout.session.async_payment_failed", _):
            event.effect = .ignore("the delayed payment failed: nothing was sold")
        case ("checkout.session.completed", "payment") where paid == "unpaid":
            // A delayed method (SEPA debit, bank transfer): async_payment_succeeded makes the line.
            event.effect = .bind
        case (_, "payment") where paid == "paid" || event.type == "checkout.session.async_payment_succeeded":
            var currency = try self.currency(session)
            var total = try required(session.int64("amount_total"), "data.object.amount_total")
            var tax = session.int64("total_details.amount_tax") ?? 0
            // Adaptive Pricing: the shopper paid in the presentment currency; the tax keeps its share.
            if let presented = session.string("presentment_details.presentment_currency")?.uppercased(), presented != currency,
                let amount = session.int64("presentment_details.presentment_amount"), total > 0
            {
                guard (0...total).contains(tax), amount >= 0,
                    let share = Int64(exactly: (Double(amount) * (Double(tax) / Double(total))).rounded())
                else {
                    throw ProviderEventError(
                        "presentment_details.presentment_amount \(amount) with tax \(tax) of \(total) is not an amount")
                }
                currency = presented
                total = amount
                tax = share
            }
            event.effect = .sale(
                ProviderSale(
                    lineItemId: PaymentProvider.stripe.lineItemPrefix + event.objectId, creationDate: event.occurredAt,
                    productIdentifier: nonEmpty(session.string("metadata.productIdentifier")),
                    quantity: max(1, session.at("metadata.quantity")?.int64Value ?? 1), currency: currency,
                    amountTaxInclusive: try milli(total, "data.object.amount_total", currency),
                    taxAmount: try milli(tax, "data.object.total_details.amount_tax", currency),
                    countryAlpha2: nonEmpty(session.string("customer_details.address.country"))))
        case (_, "payment"):
            event.effect = .ignore("payment_status \(paid): nothing to charge")
        case (_, "subscription"):
            // The subscription's invoices make the lines; this ties them to the token.
            event.effect = .bind
        default:
            event.effect = .ignore("a \(mode) session sells nothing")
        }
    }

    private static func invoice(_ invoice: JSONValue, into event: inout ProviderEvent) throws {
        let subscription = invoice.string("parent.subscription_details.subscription") ?? invoice.string("subscription")
        let metadata = invoice.at("parent.subscription_details.metadata") ?? invoice.at("subscription_details.metadata")
        let lines = invoice.at("lines.data")?.arrayValue ?? []
        let lineMetadata = lines.lazy.compactMap { $0.at("metadata") }.first { $0["externalPurchaseId"] != nil }
        event.externalPurchaseId = nonEmpty(metadata?.string("externalPurchaseId")) ?? nonEmpty(lineMetadata?.string("externalPurchaseId"))
        // Pre-basil invoices name their payment intent; basil's come with invoice_payment.paid.
        event.binds = [event.objectId] + [subscription, invoice.string("payment_intent")].compactMap { $0 }
        event.findBy = [subscription, event.objectId].compactMap { $0 }
        guard let subscription else {
            event.effect = .ignore("an invoice of no subscription: a checkout's sales come as sessions")
            return
        }
        let reason = invoice.string("billing_reason") ?? ""
        let kind: SubscriptionEvent
        switch reason {
        case "subscription_create": kind = .subscriptionStart
        case "subscription_cycle": kind = .renewal
        case "subscription_update": kind = .subscriptionChange
        default:
            event.effect = .review(
                "invoice.paid with billing_reason \(reason.isEmpty ? "(none)" : reason): linkout does not map it to a subscription event")
            return
        }
        let currency = try self.currency(invoice)
        let total = try required(invoice.int64("total"), "data.object.total")
        let tax: Int64
        if let exclusive = invoice.int64("total_excluding_tax") {
            let (difference, overflow) = total.subtractingReportingOverflow(exclusive)
            guard !overflow else { throw ProviderEventError("data.object.total_excluding_tax \(exclusive) is not an amount") }
            tax = difference
        } else if let preBasil = invoice.int64("tax") {
            tax = preBasil
        } else {
            var sum: Int64 = 0
            for amount in (invoice.at("total_taxes")?.arrayValue ?? []).compactMap({ $0.int64("amount") }) {
                let (next, overflow) = sum.addingReportingOverflow(amount)
                guard !overflow else { throw ProviderEventError("data.object.total_taxes add up to no amount") }
                sum = next
            }
            tax = sum
        }
        let periods = lines.compactMap { line -> (Int64, Int64)? in
            guard let start = line.unixSecondsAsMs("period.start"), let end = line.unixSecondsAsMs("period.end") else { return nil }
            return (start, end)
        }
        guard let start = periods.map(\.0).min(), let end = periods.map(\.1).max() else {
            throw ProviderEventError("data.object.lines.data has no period: the subscription's dates come from its lines")
        }
        let quantity = lines.first?.int64("quantity") ?? 1
        let paidAt = invoice.unixSecondsAsMs("status_transitions.paid_at") ?? event.occurredAt
        event.effect = .sale(
            ProviderSale(
                lineItemId: PaymentProvider.stripe.lineItemPrefix + event.objectId, creationDate: paidAt,
                subscription: .init(event: kind, subscriptionId: subscription, start: start, end: end),
                productIdentifier: nonEmpty(metadata?.string("productIdentifier")) ?? nonEmpty(lineMetadata?.string("productIdentifier")),
                quantity: max(1, quantity), currency: currency,
                amountTaxInclusive: try milli(total, "data.object.total", currency),
                taxAmount: try milli(tax, "data.object.total_excluding_tax", currency),
                countryAlpha2: nonEmpty(invoice.string("customer_address.country"))))
    }

    private static func currency(_ object: JSONValue) throws -> String {
        let code = try required(object.string("currency"), "data.object.currency").uppercased()
        guard code.utf8.count == 3, code.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw ProviderEventError("data.object.currency \(JSONText.quote(code)) is not a currency code")
        }
        return code
    }

    private static func milli(_ minor: Int64?, _ field: String, _ currency: String) throws -> Int64 {
        let minor = try required(minor, field)
        guard minor >= 0, let value = ProviderCurrency.milli(minor, currency: currency, provider: .stripe) else {
            throw ProviderEventError("\(field) \(minor) is not an amount")
        }
        return value
    }
}

func required<Value>(_ value: Value?, _ field: String) throws -> Value {
    guard let value else { throw ProviderEventError("\(field) is missing") }
    return value
}

func nonEmpty(_ text: String?) -> String? {
    guard let text, !text.isEmpty else { return nil }
    return text
}
