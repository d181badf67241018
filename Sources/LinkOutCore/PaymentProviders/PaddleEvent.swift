/// Paddle Billing's events, read into `ProviderEvent`s:
///
/// - `transaction.completed`: the sale, line `paddle:txn_…`, by `origin`: `web` or `api` without a
///   subscription is a one-time buy, with one a SUBSCRIPTION_START; `subscription_recurring` a RENEWAL;
///   `subscription_update` a SUBSCRIPTION_CHANGE; `subscription_payment_method_change` sells nothing. Not
///   `transaction.paid`, which comes earlier and may lack the subscription and the totals. The token comes
///   from `custom_data.externalPurchaseId`, which Paddle copies from the checkout's transaction to its
///   subscription and from there to every later transaction.
/// - `adjustment.created` / `adjustment.updated` with `action` `refund` or `chargeback` and `status:
///   approved`: a refund, line `paddle:adj_…`, of the transaction it names (adjustments carry no custom data).
/// - `address.created` / `address.updated`: the address's country, since transactions name only `address_id`.
///
/// Amounts are strings in the lowest denomination (`ProviderCurrency`); times RFC 3339.
public enum PaddleEvent {
    public static func read(_ body: [UInt8]) -> Result<ProviderEvent, ProviderEventError> {
        let json: JSONValue
        do { json = try JSONValue.parse(body) } catch { return .failure(ProviderEventError("the body is not JSON: \(error)")) }
        guard let id = json.string("event_id"), !id.isEmpty else { return .failure(ProviderEventError("no event id (event_id)")) }
        guard let type = json.string("event_type"), !type.isEmpty else { return .failure(ProviderEventError("no event type (event_type)")) }
        guard let occurred = json.string("occurred_at").flatMap(rfc3339) else { return .failure(ProviderEventError("no occurred_at time")) }
        guard let data = json.at("data"), case .object = data else { return .failure(ProviderEventError("no data object")) }
        var event = ProviderEvent(
            provider: .paddle, eventId: id, type: type, live: nil, occurredAt: occurred, objectId: data.string("id") ?? "",
            effect: .ignore(""))
        do {
            try read(data, into: &event)
        } catch let error as ProviderEventError {
            return .failure(error)
        } catch {
            return .failure(ProviderEventError("\(error)"))
        }
        return .success(event)
    }

    private static func read(_ data: JSONValue, into event: inout ProviderEvent) throws {
        switch event.type {
        case "transaction.completed":
            try transaction(data, into: &event)
        case "adjustment.created", "adjustment.updated":
            let action = data.string("action") ?? ""
            let status = data.string("status") ?? ""
            let transaction = try required(data.string("transaction_id"), "data.transaction_id")
            event.findBy = [transaction]
            if action == "chargeback_reverse" || status == "reversed" {
                event.effect = .review(
                    "adjustment \(action) \(status): money came back after a refund or chargeback; restate or withdraw its refund line by hand if Apple should know"
                )
                return
            }
            guard action == "refund" || action == "chargeback" else {
                event.effect = .ignore("adjustment action \(action): only refunds and chargebacks take money back")
                return
            }
            guard status == "approved" else {
                event.effect = .ignore("adjustment status \(status): a refund counts once approved")
                return
            }
            let currency = try self.currency(data, "data.currency_code")
            // created_at, not the approval's updated_at: every event about one adjustment then makes the same
            // line, and a restatement may not move a line's creationDate.
            let created = try required(data.string("created_at").flatMap(rfc3339), "data.created_at")
            event.effect = .refund(
                ProviderRefund(
                    lineItemId: PaymentProvider.paddle.lineItemPrefix + event.objectId, creationDate: created, refundOf: transaction,
                    currency: currency,
                    amountTaxInclusive: try milli(data.at("totals.total"), "data.totals.total", currency),
                    taxAmount: try milli(data.at("totals.tax"), "data.totals.tax", currency)))
        case "address.created", "address.updated":
            let country = try required(nonEmpty(data.string("country_code")), "data.country_code")
            event.effect = .address(id: event.objectId, countryAlpha2: country)
        default:
            event.effect = .ignore("linkout does not read \(event.type) events")
        }
    }

    private static func transaction(_ data: JSONValue, into event: inout ProviderEvent) throws {
        let subscription = nonEmpty(data.string("subscription_id"))
        event.externalPurchaseId = nonEmpty(data.string("custom_data.externalPurchaseId"))
        event.binds = [event.objectId] + [subscription].compactMap { $0 }
        event.findBy = [subscription, event.objectId].compactMap { $0 }
        let origin = data.string("origin") ?? ""
        var kind: SubscriptionEvent?
        switch origin {
        case "web", "api": kind = subscription == nil ? nil : .subscriptionStart
        case "subscription_recurring": kind = .renewal
        case "subscription_update": kind = .subscriptionChange
        case "subscription_payment_method_change":
            event.effect = .ignore("a payment method change sells nothing")
            return
        default:
            event.effect = .review(
                "transaction origin \(origin.isEmpty ? "(none)" : origin): linkout does not map it to a sale; post its line through /v1/line-items if Apple should know"
            )
            return
        }
        var period: ProviderSale.Subscription?
        if let kind {
            guard let subscription else {
                event.effect = .review("a \(origin) transaction without subscription_id")
                return
            }
            let start = try required(data.string("billing_period.starts_at").flatMap(rfc3339), "data.billing_period.starts_at")
            let end = try required(data.string("billing_period.ends_at").flatMap(rfc3339), "data.billing_period.ends_at")
            period = .init(event: kind, subscriptionId: subscription, start: start, end: end)
        }
        let currency = try self.currency(data, "data.currency_code")
        let items = data.at("items")?.arrayValue ?? []
        let billed = data.string("billed_at").flatMap(rfc3339) ?? event.occurredAt
        event.effect = .sale(
            ProviderSale(
                lineItemId: PaymentProvider.paddle.lineItemPrefix + event.objectId, creationDate: billed, subscription: period,
                productIdentifier: nonEmpty(data.string("custom_data.productIdentifier")),
                quantity: items.count == 1 ? max(1, items[0].int64("quantity") ?? 1) : 1, currency: currency,
                amountTaxInclusive: try milli(data.at("details.totals.total"), "data.details.totals.total", currency),
                taxAmount: try milli(data.at("details.totals.tax"), "data.details.totals.tax", currency),
                addressId: nonEmpty(data.string("address_id"))))
    }

    private static func currency(_ data: JSONValue, _ field: String) throws -> String {
        let code = try required(data.string(field.replacingDataPrefix), field)
        guard code.utf8.count == 3, code.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw ProviderEventError("\(field) \(JSONText.quote(code)) is not a currency code")
        }
        return code
    }

    private static func milli(_ value: JSONValue?, _ field: String, _ currency: String) throws -> Int64 {
        let minor = try required(value?.int64Value, field)
        guard minor >= 0, let milli = ProviderCurrency.milli(minor, currency: currency, provider: .paddle) else {
            throw ProviderEventError("\(field) \(minor) is not an amount")
        }
        return milli
    }

    /// RFC 3339 in UTC as Paddle writes it (`2024-04-12T10:18:49.621022Z`), to Unix ms; `+00:00` is taken
    /// too. Other offsets are refused rather than guessed.
    public static func rfc3339(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20 else { return nil }
        var rest = bytes[19...]
        var millis: Int64 = 0
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            let digits = rest.prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard !digits.isEmpty else { return nil }
            for (index, digit) in digits.prefix(3).enumerated() {
                millis += Int64(digit - UInt8(ascii: "0")) * [100, 10, 1][index]
            }
            rest = rest.dropFirst(digits.count)
        }
        let zone = String(decoding: rest, as: UTF8.self)
        guard zone == "Z" || zone == "+00:00" else { return nil }
        guard let seconds = UTCDate.parse(String(decoding: bytes[0..<19], as: UTF8.self) + "Z") else { return nil }
        return seconds + millis
    }
}

extension String {
    /// `data.currency_code` → `currency_code`: fields are named in messages from the event's root.
    fileprivate var replacingDataPrefix: String { hasPrefix("data.") ? String(dropFirst(5)) : self }
}
