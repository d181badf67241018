import Foundation
import LinkOutTestSupport

/// Webhook bodies in the payment providers' documented shapes, for the tests, and their signatures made
/// by the providers' own Python libraries (`provider_sign.py`).
enum ProviderEvents {
    static let stripeSecret = "whsec_test_" + String(repeating: "a1", count: 16)
    static let stripeOldSecret = "whsec_test_" + String(repeating: "0f", count: 16)
    static let paddleSecret = "pdl_ntfset_01hv8x_" + String(repeating: "Zk", count: 12)

    static var nowSeconds: Int64 { Int64(Date().timeIntervalSince1970) }
    static func id(_ prefix: String) -> String { prefix + String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(24)) }

    // MARK: Stripe

    /// An event as Stripe sends it: pretty-printed, `livemode` on the event, the object under `data`.
    static func stripe(
        _ type: String, _ object: [String: Any], live: Bool = true, apiVersion: String = "2025-03-31.basil",
        id: String = ProviderEvents.id("evt_"), created: Int64 = ProviderEvents.nowSeconds
    ) -> Data {
        var object = object
        object["livemode"] = live
        let event: [String: Any] = [
            "id": id, "object": "event", "api_version": apiVersion, "created": created, "livemode": live,
            "pending_webhooks": 1, "request": ["id": NSNull(), "idempotency_key": NSNull()], "type": type,
            "data": ["object": object],
        ]
        return try! JSONSerialization.data(withJSONObject: event, options: [.prettyPrinted, .sortedKeys])
    }

    /// A Checkout Session (docs.stripe.com/api/checkout/sessions/object).
    static func session(
        _ id: String, reference: String?, mode: String = "payment", paid: String = "paid", total: Int64 = 0, tax: Int64 = 0,
        currency: String = "eur", country: String? = "NL", paymentIntent: String? = nil, subscription: String? = nil,
        invoice: String? = nil, metadata: [String: String] = [:]
    ) -> [String: Any] {
        [
            "id": id, "object": "checkout.session", "mode": mode, "payment_status": paid, "status": "complete",
            "client_reference_id": reference as Any? ?? NSNull(), "metadata": metadata, "currency": currency,
            "amount_subtotal": total - tax, "amount_total": total,
            "total_details": ["amount_discount": 0, "amount_shipping": 0, "amount_tax": tax],
            "customer_details": [
                "email": "shopper@example.com", "address": ["country": country as Any? ?? NSNull(), "postal_code": "1011"],
            ],
            "payment_intent": paymentIntent as Any? ?? NSNull(), "subscription": subscription as Any? ?? NSNull(),
            "invoice": invoice as Any? ?? NSNull(),
        ]
    }

    /// An Invoice, in basil's shape (`parent.subscription_details`, `total_taxes`) or the one before it
    /// (`subscription`, `subscription_details`, `tax`, `payment_intent`).
    static func invoice(
        _ id: String, subscription: String, reason: String, total: Int64, tax: Int64, currency: String = "eur", country: String = "NL",
        period: (Int64, Int64), paidAt: Int64 = ProviderEvents.nowSeconds, metadata: [String: String] = [:], basil: Bool = true,
        paymentIntent: String? = nil
    ) -> [String: Any] {
        var line: [String: Any] = [
            "id": "il_" + id.dropFirst(3), "object": "line_item", "amount": total - tax, "currency": currency, "quantity": 1,
            "period": ["start": period.0, "end": period.1], "metadata": metadata,
        ]
        var invoice: [String: Any] = [
            "id": id, "object": "invoice", "status": "paid", "billing_reason": reason, "currency": currency, "total": total,
            "subtotal": total - tax, "total_excluding_tax": total - tax, "amount_paid": total,
            "customer_address": ["country": country], "status_transitions": ["paid_at": paidAt, "finalized_at": paidAt],
            // The invoice's own period is the previous one: linkout reads the lines'.
            "period_start": period.0 - 2_592_000, "period_end": period.0,
        ]
        if basil {
            line["parent"] = ["type": "subscription_item_details", "subscription_item_details": ["subscription": subscription]]
            line["pricing"] = ["price_details": ["product": "prod_pro"]]
            invoice["parent"] = [
                "type": "subscription_details", "subscription_details": ["subscription": subscription, "metadata": metadata],
            ]
            invoice["total_taxes"] = [["amount": tax, "tax_behavior": "exclusive"]]
        } else {
            line["type"] = "subscription"
            line["price"] = ["product": "prod_pro"]
            invoice["subscription"] = subscription
            invoice["subscription_details"] = ["metadata": metadata]
            invoice["tax"] = tax
            invoice["payment_intent"] = paymentIntent as Any? ?? NSNull()
        }
        invoice["lines"] = ["object": "list", "data": [line], "has_more": false]
        return invoice
    }

    static func refund(
        _ id: String, paymentIntent: String, amount: Int64, currency: String = "eur", status: String = "succeeded"
    ) -> [String: Any] {
        [
            "id": id, "object": "refund", "amount": amount, "currency": currency, "payment_intent": paymentIntent,
            "charge": "ch_" + paymentIntent.dropFirst(3), "status": status, "created": nowSeconds, "reason": "requested_by_customer",
        ]
    }

    // MARK: Paddle

    /// An event as Paddle Billing sends it (developer.paddle.com/webhooks).
    static func paddle(_ type: String, _ data: [String: Any], id: String = ProviderEvents.id("evt_")) -> Data {
        let event: [String: Any] = [
            "event_id": id, "event_type": type, "occurred_at": rfc3339(Date()), "notification_id": ProviderEvents.id("ntf_"), "data": data,
        ]
        return try! JSONSerialization.data(withJSONObject: event, options: [.sortedKeys])
    }

    static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    static func transaction(
        _ id: String, reference: String?, origin: String = "web", subscription: String? = nil, total: String, tax: String,
        currency: String = "EUR", address: String, product: String? = "gems.500", period: (Date, Date)? = nil
    ) -> [String: Any] {
        var custom: [String: Any] = [:]
        if let reference { custom["externalPurchaseId"] = reference }
        if let product { custom["productIdentifier"] = product }
        var data: [String: Any] = [
            "id": id, "status": "completed", "origin": origin, "subscription_id": subscription as Any? ?? NSNull(),
            "custom_data": custom.isEmpty ? NSNull() : custom, "currency_code": currency, "address_id": address,
            "customer_id": "ctm_01", "billed_at": rfc3339(Date()), "created_at": rfc3339(Date()),
            "items": [["price": ["id": "pri_01", "product_id": "pro_01"], "quantity": 1]],
            "details": [
                "totals": [
                    "subtotal": String(Int(total)! - Int(tax)!), "tax": tax, "total": total, "grand_total": total,
                    "currency_code": currency,
                ]
            ],
        ]
        if let period { data["billing_period"] = ["starts_at": rfc3339(period.0), "ends_at": rfc3339(period.1)] }
        return data
    }

    static func adjustment(
        _ id: String, transaction: String, total: String, tax: String, action: String = "refund",
        status: String = "approved", currency: String = "EUR"
    ) -> [String: Any] {
        [
            "id": id, "action": action, "status": status, "transaction_id": transaction, "currency_code": currency,
            "reason": "refund requested", "created_at": rfc3339(Date()), "updated_at": rfc3339(Date()),
            "items": [["item_id": "txnitm_01", "type": "partial", "amount": total]],
            "totals": [
                "subtotal": String(Int(total)! - Int(tax)!), "tax": tax, "total": total, "fee": "0", "earnings": "0",
                "currency_code": currency,
            ],
        ]
    }

    static func address(_ id: String, country: String) -> [String: Any] {
        ["id": id, "country_code": country, "postal_code": "1011", "status": "active", "customer_id": "ctm_01"]
    }

    // MARK: Signing

    enum Provider: String { case stripe, paddle }

    /// Signature headers for each body, made by the provider's own library.
    static func sign(_ items: [(Provider, Data)], secrets: [String]? = nil, timestamp: Int64 = ProviderEvents.nowSeconds) throws -> [String]
    {
        let request: [String: Any] = [
            "items": items.map { provider, body in
                [
                    "provider": provider.rawValue, "secrets": secrets ?? [provider == .stripe ? stripeSecret : paddleSecret],
                    "timestamp": timestamp, "body": String(decoding: body, as: UTF8.self),
                ] as [String: Any]
            }
        ]
        let result = try Command.python(
            [LinkoutBinary.packageRoot.path + "/Tests/LinkOutIntegrationTests/Support/provider_sign.py", "sign"],
            input: try JSONSerialization.data(withJSONObject: request))
        guard result.status == 0, let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any],
            let headers = json["headers"] as? [String]
        else {
            throw GatewayProcess.StartError(
                description: "provider_sign.py failed (pip install stripe paddle-python-sdk?): \(result.stderr)")
        }
        return headers
    }

    /// The libraries' verdicts (`ok`, `mismatch`, `error: …`) on headers.
    static func verify(_ items: [(Provider, Data, header: String)], secrets: [String], tolerance: Int? = nil) throws -> [String] {
        let request: [String: Any] = [
            "items": items.map { provider, body, header in
                [
                    "provider": provider.rawValue, "secrets": secrets, "header": header, "body": String(decoding: body, as: UTF8.self),
                    "tolerance": tolerance as Any? ?? NSNull(),
                ] as [String: Any]
            }
        ]
        let result = try Command.python(
            [LinkoutBinary.packageRoot.path + "/Tests/LinkOutIntegrationTests/Support/provider_sign.py", "verify"],
            input: try JSONSerialization.data(withJSONObject: request))
        guard result.status == 0, let json = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any],
            let verdicts = json["verdicts"] as? [String]
        else {
            throw GatewayProcess.StartError(description: "provider_sign.py failed: \(result.stderr)")
        }
        return verdicts
    }
}

extension ReportingFixture {
    static let stripePath = "/webhooks/stripe"
    static let paddlePath = "/webhooks/paddle"

    /// The `paymentProviders` section, secrets in files as the README advises.
    func paymentProviders(defaultProduct: String? = "gems.default", paddleEnvironment: String = "production") -> String {
        folder.write("stripe-webhook-secrets", "\(ProviderEvents.stripeSecret)\n\(ProviderEvents.stripeOldSecret)\n")
        folder.write("paddle-webhook-secrets", "\(ProviderEvents.paddleSecret)\n")
        let product = defaultProduct.map { #", "defaultProductIdentifier": "\#($0)""# } ?? ""
        return """
            "paymentProviders": {
              "stripe": { "path": "\(Self.stripePath)", "signingSecretsFile": "stripe-webhook-secrets"\(product) },
              "paddle": { "path": "\(Self.paddlePath)", "signingSecretsFile": "paddle-webhook-secrets", "environment": "\(paddleEnvironment)" }
            },
            """
    }

    /// The fixture's config with `paymentProviders` added (its first member), served.
    func serveWithProviders(defaultProduct: String? = "gems.default", paddleEnvironment: String = "production") throws -> GatewayProcess {
        var text = try String(contentsOfFile: configPath, encoding: .utf8)
        let brace = text.range(of: "{")!
        text.replaceSubrange(brace, with: "{\n" + paymentProviders(defaultProduct: defaultProduct, paddleEnvironment: paddleEnvironment))
        let config = folder.write("providers.json", text)
        return try GatewayProcess(config: config, store: storePath, extraArguments: ["--api-listen", "127.0.0.1:0"])
    }

    /// Posts a webhook to the shoppers' listener as the provider does; the status and JSON answer.
    func webhook(
        _ server: GatewayProcess, _ provider: ProviderEvents.Provider, _ body: Data, signature: String?
    ) throws -> (status: Int, json: [String: Any]) {
        let path = provider == .stripe ? Self.stripePath : Self.paddlePath
        var head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        if let signature { head += "\(provider == .stripe ? "Stripe-Signature" : "Paddle-Signature"): \(signature)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let connection = try HTTPConnection(port: server.port)
        try connection.sendRaw(Array(head.utf8) + Array(body))
        let response = try connection.readResponse()
        return (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:])
    }

    /// Signs each body with the provider's library and posts it; the outcomes linkout answered, in order.
    @discardableResult
    func deliver(_ server: GatewayProcess, _ events: [(ProviderEvents.Provider, Data)]) throws -> [String] {
        let headers = try ProviderEvents.sign(events)
        return try zip(events, headers).map { event, header in
            let answer = try webhook(server, event.0, event.1, signature: header)
            return answer.status == 200 ? (answer.json["outcome"] as? String ?? "?") : "\(answer.status) \(answer.json["error"] ?? "")"
        }
    }

    /// Every line Apple accepted for `id`, across reports, latest revision per lineItemId.
    func acceptedLines(_ id: String, standIn: AppleStandIn? = nil) throws -> [String: [String: Any]] {
        var lines: [String: [String: Any]] = [:]
        for report in try (standIn ?? production).accepted() where report["externalPurchaseId"] as? String == id {
            for line in (report["body"] as? [String: Any])?["lineItems"] as? [[String: Any]] ?? [] {
                lines[line["lineItemId"] as? String ?? ""] = line
            }
        }
        return lines
    }
}
