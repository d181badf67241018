import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// Stripe's and Paddle's webhooks, end to end: the real binary takes events signed by the providers' own
/// libraries on the shoppers' listener, and the reports they make land on the Apple stand-in with exactly
/// the line items the payments were.
@Suite(.serialized) struct PaymentProviderTests {
    typealias E = ProviderEvents
    static let day: Int64 = 86_400

    /// Waits until Apple accepted exactly `ids` for `token` (and nothing more arrives for a moment).
    func waitForLines(
        _ fixture: ReportingFixture, _ token: String, _ ids: Set<String>, timeout: TimeInterval = 20
    ) throws -> [String: [String: Any]] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var lines = try fixture.acceptedLines(token)
        while Set(lines.keys) != ids && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            lines = try fixture.acceptedLines(token)
        }
        return lines
    }

    func amounts(_ line: [String: Any]?) -> [Int] {
        ["amountTaxInclusive", "taxAmount", "amountTaxExclusive", "netAmountTaxExclusive"].map { line?[$0] as? Int ?? -1 }
    }

    enum Store: String, CaseIterable { case sqlite, postgres }

    /// A fixture on a SQLite file, or on a fresh PostgreSQL database migrated by `store migrate`.
    func fixture(_ store: Store) throws -> ReportingFixture {
        guard store == .postgres else { return try ReportingFixture() }
        let url = try PostgresServer.createDatabase()
        let migrate = try LinkoutBinary.run(["store", "migrate", "--store", url])
        try #require(migrate.status == 0, "\(migrate.stderr)")
        return try ReportingFixture(store: url)
    }

    @Test(arguments: Store.allCases)
    func stripeEventsBecomeExactlyTheLinesTheyWere(_ store: Store) throws {
        let fixture = try fixture(store)
        let server = try fixture.serveWithProviders()
        defer { server.stop() }
        let eur = try fixture.linkOut(server, ageDays: 0)
        let jpy = try fixture.linkOut(server, ageDays: 0)
        let sub = try fixture.linkOut(server, ageDays: 0)
        let test = try fixture.linkOut(server, ageDays: 0)
        let start = E.nowSeconds - Self.day

        let eurSession = E.stripe(
            "checkout.session.completed",
            E.session(
                "cs_eur1", reference: eur, total: 1210, tax: 210, paymentIntent: "pi_eur1", metadata: ["productIdentifier": "gems.500"]))
        let outcomes = try fixture.deliver(
            server,
            [
                (.stripe, eurSession),
                // A refund before the sale it refunds: parked, then taken when the session binds its payment intent.
                (.stripe, E.stripe("refund.created", E.refund("re_jpy1", paymentIntent: "pi_jpy1", amount: 500, currency: "jpy"))),
                (
                    .stripe,
                    E.stripe(
                        "checkout.session.completed",
                        E.session(
                            "cs_jpy1", reference: jpy, total: 500, tax: 45, currency: "jpy", country: "JP", paymentIntent: "pi_jpy1"))
                ),
                // The first invoice before its checkout session: parked on the subscription.
                (
                    .stripe,
                    E.stripe(
                        "invoice.paid",
                        E.invoice(
                            "in_sub1", subscription: "sub_1", reason: "subscription_create", total: 999, tax: 173,
                            period: (start, start + 30 * Self.day), metadata: ["productIdentifier": "pro.monthly"]))
                ),
                (
                    .stripe,
                    E.stripe(
                        "checkout.session.completed",
                        E.session(
                            "cs_sub1", reference: sub, mode: "subscription", subscription: "sub_1", invoice: "in_sub1"))
                ),
                // A renewal in the shape before basil, and one in basil's with its invoice payment.
                (
                    .stripe,
                    E.stripe(
                        "invoice.paid",
                        E.invoice(
                            "in_sub2", subscription: "sub_1", reason: "subscription_cycle", total: 999, tax: 173,
                            period: (start + 30 * Self.day, start + 60 * Self.day), metadata: ["productIdentifier": "pro.monthly"],
                            basil: false,
                            paymentIntent: "pi_sub2"), apiVersion: "2024-06-20")
                ),
                (
                    .stripe,
                    E.stripe(
                        "invoice.paid",
                        E.invoice(
                            "in_sub3", subscription: "sub_1", reason: "subscription_cycle", total: 999, tax: 173,
                            period: (start + 60 * Self.day, start + 90 * Self.day), metadata: ["productIdentifier": "pro.monthly"]))
                ),
                (
                    .stripe,
                    E.stripe(
                        "invoice_payment.paid",
                        [
                            "id": "inpay_3", "object": "invoice_payment", "invoice": "in_sub3",
                            "payment": ["type": "payment_intent", "payment_intent": "pi_sub3"],
                        ],
                        apiVersion: "2025-05-28.basil")
                ),
                // Half of the EUR order refunded: the tax is the bought line's share.
                (.stripe, E.stripe("refund.created", E.refund("re_eur1", paymentIntent: "pi_eur1", amount: 605))),
                // The same event again, as Stripe retries it.
                (.stripe, eurSession),
                // A test-mode payment for a production token: held, never sent.
                (
                    .stripe,
                    E.stripe(
                        "checkout.session.completed",
                        E.session(
                            "cs_test1", reference: test, total: 1210, tax: 210, paymentIntent: "pi_test1"), live: false)
                ),
                (.stripe, E.stripe("payment_intent.succeeded", ["id": "pi_eur1", "object": "payment_intent"])),
                (.stripe, E.stripe("checkout.session.completed", E.session("cs_other", reference: nil, total: 500, tax: 0))),
            ])
        #expect(
            outcomes == [
                "taken", "parked", "taken", "parked", "taken", "taken", "taken", "taken", "taken", "duplicate", "held",
                "ignored", "unmatched",
            ])

        // A bad signature and a stale one: 400, nothing stored.
        let body = E.stripe("checkout.session.completed", E.session("cs_bad", reference: eur, total: 100, tax: 0))
        let bad = try fixture.webhook(server, .stripe, body, signature: "t=\(E.nowSeconds),v1=" + String(repeating: "0", count: 64))
        #expect(bad.status == 400 && bad.json["error"] as? String == "bad_signature", "\(bad)")
        let stale = try fixture.webhook(server, .stripe, body, signature: try E.sign([(.stripe, body)], timestamp: E.nowSeconds - 3600)[0])
        #expect(stale.status == 400 && stale.json["error"] as? String == "stale_signature", "\(stale)")
        let unsigned = try fixture.webhook(server, .stripe, body, signature: nil)
        #expect(unsigned.status == 400 && unsigned.json["error"] as? String == "missing_signature")

        let eurLines = try waitForLines(fixture, eur, ["stripe:cs_eur1", "stripe:re_eur1"])
        #expect(Set(eurLines.keys) == ["stripe:cs_eur1", "stripe:re_eur1"])
        #expect(amounts(eurLines["stripe:cs_eur1"]) == [12100, 2100, 10000, 10000])
        #expect(eurLines["stripe:cs_eur1"]?["productIdentifier"] as? String == "gems.500")
        #expect(eurLines["stripe:cs_eur1"]?["taxCountry"] as? String == "NLD")
        #expect(amounts(eurLines["stripe:re_eur1"]) == [6050, 1050, 5000, 5000])
        #expect(eurLines["stripe:re_eur1"]?["referenceLineItemId"] as? String == "stripe:cs_eur1")

        let jpyLines = try waitForLines(fixture, jpy, ["stripe:cs_jpy1", "stripe:re_jpy1"])
        #expect(Set(jpyLines.keys) == ["stripe:cs_jpy1", "stripe:re_jpy1"])
        #expect(amounts(jpyLines["stripe:cs_jpy1"]) == [500_000, 45000, 455_000, 455_000])
        #expect(jpyLines["stripe:cs_jpy1"]?["pricingCurrency"] as? String == "JPY")
        #expect(jpyLines["stripe:cs_jpy1"]?["taxCountry"] as? String == "JPN")
        #expect(jpyLines["stripe:cs_jpy1"]?["productIdentifier"] as? String == "gems.default")
        #expect(amounts(jpyLines["stripe:re_jpy1"]) == [500_000, 45000, 455_000, 455_000])

        let subLines = try waitForLines(fixture, sub, ["stripe:in_sub1", "stripe:in_sub2", "stripe:in_sub3"])
        #expect(Set(subLines.keys) == ["stripe:in_sub1", "stripe:in_sub2", "stripe:in_sub3"])
        #expect(subLines["stripe:in_sub1"]?["subscriptionEvent"] as? String == "SUBSCRIPTION_START")
        #expect(subLines.values.map { $0["productIdentifier"] as? String } == Array(repeating: "pro.monthly", count: 3))
        #expect(subLines["stripe:in_sub2"]?["subscriptionEvent"] as? String == "RENEWAL")
        #expect(subLines["stripe:in_sub2"]?["referenceLineItemId"] as? String == "stripe:in_sub1")
        #expect(
            subLines.mapValues { $0["subscriptionDaysOfPaidService"] as? Int }
                == ["stripe:in_sub1": 0, "stripe:in_sub2": 30, "stripe:in_sub3": 60])
        #expect(subLines["stripe:in_sub3"]?["subscriptionStartDate"] as? Int == Int(start + 60 * Self.day) * 1000)
        #expect(amounts(subLines["stripe:in_sub2"]) == [9990, 1730, 8260, 8260])

        Thread.sleep(forTimeInterval: 0.5)
        #expect(try fixture.acceptedLines(test).isEmpty, "a test-mode payment never reaches Apple")
        let metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
        #expect(metrics.contains(#"linkout_provider_events_total{provider="stripe",outcome="held"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"linkout_provider_events_refused_total{provider="stripe",reason="bad_signature"} 1"#))
        #expect(metrics.contains(#"linkout_provider_events_total{provider="stripe",outcome="duplicate"} 1"#))
    }

    @Test(arguments: Store.allCases)
    func paddleEventsBecomeExactlyTheLinesTheyWere(_ store: Store) throws {
        let fixture = try fixture(store)
        let server = try fixture.serveWithProviders()
        defer { server.stop() }
        let once = try fixture.linkOut(server, ageDays: 0)
        let monthly = try fixture.linkOut(server, ageDays: 0)
        let tester = try fixture.linkOut(server, ageDays: 0, sandbox: true)
        let now = Date()
        let month: TimeInterval = 30 * 86_400
        let outcomes = try fixture.deliver(
            server,
            [
                // The transaction names its address, whose country arrives after it: parked until then.
                (
                    .paddle,
                    E.paddle(
                        "transaction.completed", E.transaction("txn_once1", reference: once, total: "1210", tax: "210", address: "add_nl1"))
                ),
                (.paddle, E.paddle("address.created", E.address("add_nl1", country: "NL"))),
                (.paddle, E.paddle("adjustment.created", E.adjustment("adj_once1", transaction: "txn_once1", total: "605", tax: "105"))),
                // A refund awaiting approval sells nothing back yet; its approval does.
                (
                    .paddle,
                    E.paddle(
                        "adjustment.created",
                        E.adjustment("adj_once2", transaction: "txn_once1", total: "100", tax: "17", status: "pending_approval"))
                ),
                // A yen subscription: zero-decimal amounts, its renewal found through custom_data copied by Paddle.
                (.paddle, E.paddle("address.created", E.address("add_jp1", country: "JP"))),
                (
                    .paddle,
                    E.paddle(
                        "transaction.completed",
                        E.transaction(
                            "txn_sub1", reference: monthly, subscription: "sub_p1", total: "1100", tax: "100", currency: "JPY",
                            address: "add_jp1",
                            product: "pro.monthly", period: (now, now + month)))
                ),
                (
                    .paddle,
                    E.paddle(
                        "transaction.completed",
                        E.transaction(
                            "txn_sub2", reference: monthly, origin: "subscription_recurring", subscription: "sub_p1", total: "1100",
                            tax: "100",
                            currency: "JPY", address: "add_jp1", product: "pro.monthly", period: (now + month, now + 2 * month)))
                ),
                // A chargeback, approved as Paddle sends them.
                (
                    .paddle,
                    E.paddle(
                        "adjustment.created",
                        E.adjustment("adj_sub1", transaction: "txn_sub2", total: "1100", tax: "100", action: "chargeback", currency: "JPY"))
                ),
                // The production secret's payment for a SANDBOX token: held for a person.
                (
                    .paddle,
                    E.paddle(
                        "transaction.completed",
                        E.transaction("txn_tester", reference: tester, total: "1210", tax: "210", address: "add_nl1"))
                ),
                (
                    .paddle,
                    E.paddle("transaction.paid", E.transaction("txn_once1", reference: once, total: "1210", tax: "210", address: "add_nl1"))
                ),
            ])
        #expect(outcomes == ["parked", "taken", "taken", "ignored", "taken", "taken", "taken", "taken", "held", "ignored"])

        let onceLines = try waitForLines(fixture, once, ["paddle:txn_once1", "paddle:adj_once1"])
        #expect(amounts(onceLines["paddle:txn_once1"]) == [12100, 2100, 10000, 10000])
        #expect(onceLines["paddle:txn_once1"]?["taxCountry"] as? String == "NLD")
        #expect(onceLines["paddle:txn_once1"]?["productType"] as? String == "ONE_TIME_BUY")
        #expect(amounts(onceLines["paddle:adj_once1"]) == [6050, 1050, 5000, 5000])
        let subLines = try waitForLines(fixture, monthly, ["paddle:txn_sub1", "paddle:txn_sub2", "paddle:adj_sub1"])
        #expect(amounts(subLines["paddle:txn_sub1"]) == [1_100_000, 100_000, 1_000_000, 1_000_000])
        #expect(subLines["paddle:txn_sub2"]?["subscriptionEvent"] as? String == "RENEWAL")
        #expect(subLines["paddle:txn_sub2"]?["subscriptionDaysOfPaidService"] as? Int == 30)
        #expect(subLines["paddle:adj_sub1"]?["referenceLineItemId"] as? String == "paddle:txn_sub2")
        #expect(try fixture.acceptedLines(tester, standIn: fixture.sandbox).isEmpty)

        let status = try LinkoutBinary.run(["report", "status", "--config", fixture.folder.file("providers.json")])
        #expect(status.stdout.contains("payment providers"), "\(status.stdout)")
        #expect(status.stdout.contains("txn_tester  held  \(tester)  a live payment for a SANDBOX token"), "\(status.stdout)")
        let json = try LinkoutBinary.run(["report", "status", "--config", fixture.folder.file("providers.json"), "--format", "json"])
        let providers =
            (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["paymentProviders"] as? [String: Any]
        let paddle = (providers?["events"] as? [String: Any])?["paddle"] as? [String: Any]
        #expect(
            paddle?["taken"] as? Int == 7 && paddle?["held"] as? Int == 1 && paddle?["ignored"] as? Int == 2
                && paddle?["parked"] as? Int == 0,
            "\(json.stdout)")
        // The dashboard's reporting panel reads the same.
        let api = try fetch(port: server.adminPort, "GET", "/api/payment-providers")
        let answer = try JSONSerialization.jsonObject(with: Data(api.body)) as? [String: Any]
        let open = answer?["open"] as? [[String: Any]] ?? []
        #expect(
            open.map { $0["outcome"] as? String } == ["held"]
                && open.first?["externalPurchaseId"] as? String == "SANDBOX_" + tester.dropFirst(8).prefix(8) + "…")
    }

    /// Two instances on one PostgreSQL database: an event parked on one is taken when its binding reaches
    /// the other, and the same event delivered to both at once is taken once.
    @Test func onPostgresEventsAreSharedAndTakenOnce() throws {
        let url = try PostgresServer.createDatabase()
        let migrate = try LinkoutBinary.run(["store", "migrate", "--store", url])
        try #require(migrate.status == 0, "\(migrate.stderr)")
        let fixture = try ReportingFixture(store: url)
        let first = try fixture.serveWithProviders()
        let second = try fixture.serveWithProviders()
        defer {
            first.stop()
            second.stop()
        }
        let token = try fixture.linkOut(first, ageDays: 0)
        let refund = E.stripe("refund.created", E.refund("re_pg1", paymentIntent: "pi_pg1", amount: 605))
        let session = E.stripe(
            "checkout.session.completed",
            E.session(
                "cs_pg1", reference: token, total: 1210, tax: 210, paymentIntent: "pi_pg1", metadata: ["productIdentifier": "gems.500"]))
        let headers = try E.sign([(.stripe, refund), (.stripe, session)])
        #expect(try fixture.webhook(second, .stripe, refund, signature: headers[0]).json["outcome"] as? String == "parked")
        // The session to both instances at once: one takes it (and frees the refund), the other answers duplicate.
        let answers = LockedList()
        let request =
            Array(
                ("POST \(ReportingFixture.stripePath) HTTP/1.1\r\nHost: 127.0.0.1\r\nStripe-Signature: \(headers[1])\r\n"
                    + "Content-Length: \(session.count)\r\nConnection: close\r\n\r\n").utf8) + Array(session)
        let ports = [first.port, second.port]
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let response = try? { () throws -> HTTPResponse in
                let connection = try HTTPConnection(port: ports[index])
                try connection.sendRaw(request)
                return try connection.readResponse()
            }()
            let json = response.flatMap { try? JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any] }
            answers.append(json?["outcome"] as? String ?? "error")
        }
        #expect(answers.snapshot.sorted() == ["duplicate", "taken"])
        let lines = try waitForLines(fixture, token, ["stripe:cs_pg1", "stripe:re_pg1"])
        #expect(amounts(lines["stripe:re_pg1"]) == [6050, 1050, 5000, 5000])
        #expect(try fixture.production.reports().allSatisfy { $0["accepted"] as? Bool == true })
    }

    /// linkout's verifier against the providers' own libraries, both ways: headers stripe-python and
    /// paddle-python-sdk make (a rotation's two signatures among them) are taken by the real binary, and the
    /// libraries accept linkout's signer and refuse what linkout refuses.
    @Test func signaturesAgreeWithTheProvidersLibraries() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serveWithProviders()
        defer { server.stop() }
        let token = try fixture.linkOut(server, ageDays: 0)
        let stripeBody = E.stripe(
            "checkout.session.completed", E.session("cs_sig1", reference: token, mode: "subscription", subscription: "sub_sig"))
        let paddleBody = E.paddle("address.created", E.address("add_sig1", country: "NL"))
        // Signed by the old and the new secret at once, as during a rotation; linkout holds both.
        let rotated = try E.sign([(.stripe, stripeBody)], secrets: [E.stripeOldSecret, E.stripeSecret])[0]
        #expect(rotated.components(separatedBy: "v1=").count == 3)
        #expect(try fixture.webhook(server, .stripe, stripeBody, signature: rotated).json["outcome"] as? String == "taken")
        let paddle = try E.sign([(.paddle, paddleBody)])[0]
        #expect(try fixture.webhook(server, .paddle, paddleBody, signature: paddle).json["outcome"] as? String == "taken")
        // Another endpoint's secret: the library and linkout both refuse it.
        let foreign = try E.sign([(.stripe, stripeBody)], secrets: ["whsec_someone_elses_endpoint_0000"])[0]
        #expect(try fixture.webhook(server, .stripe, stripeBody, signature: foreign).status == 400)
        #expect(try E.verify([(.stripe, stripeBody, header: foreign)], secrets: [E.stripeSecret]) == ["mismatch"])

        // linkout's own signer, as the libraries judge it.
        let now = E.nowSeconds
        let ours = [
            (
                E.Provider.stripe, stripeBody,
                header: LinkOutCoreSigner.header(stripeBody, .stripe, now, [E.stripeSecret, E.stripeOldSecret])
            ),
            (E.Provider.paddle, paddleBody, header: LinkOutCoreSigner.header(paddleBody, .paddle, now, [E.paddleSecret])),
        ]
        #expect(try E.verify([ours[0]], secrets: [E.stripeOldSecret], tolerance: 300) == ["ok"])
        #expect(try E.verify([ours[1]], secrets: [E.paddleSecret]) == ["ok"])
        var tampered = stripeBody
        tampered.append(0x20)
        #expect(try E.verify([(.stripe, tampered, header: ours[0].header)], secrets: [E.stripeSecret]) == ["mismatch"])
        #expect(try fixture.webhook(server, .stripe, tampered, signature: ours[0].header).json["error"] as? String == "bad_signature")
    }

    /// `externalPurchaseIdAs`: a Stripe Payment Link gets the id as `client_reference_id`, which Stripe
    /// copies onto the Checkout Session; a SANDBOX id keeps the characters Stripe allows there.
    @Test func aPaymentLinkGetsTheIdAsItsClientReference() throws {
        let folder = TemporaryFolder()
        let config = folder.write(
            "linkout.json",
            """
            { "store": "\(folder.file("store.sqlite"))", "publicDir": "\(LinkoutBinary.packageRoot.path)/Public",
              "apps": [{ "bundleId": "com.example", "appAppleId": 1234567890 }],
              "links": [{ "id": "nl", "path": "/nl", "country": "nl",
                          "destinations": [{ "url": "https://buy.stripe.com/test_6oE5kL0aT" }],
                          "parameters": { "externalPurchaseIdAs": "client_reference_id", "passThrough": ["utm_*"] } }] }
            """)
        let server = try GatewayProcess(config: config, store: folder.file("store.sqlite"))
        defer { server.stop() }
        let id = "SANDBOX_" + UUID().uuidString.lowercased()
        let response = try server.get(TokenBuilder.linkOut(token: TokenBuilder.minted(id: id)) + "&client_reference_id=evil&utm_source=app")
        #expect(response.status == 302)
        #expect(response[header: "Location"] == "https://buy.stripe.com/test_6oE5kL0aT?client_reference_id=\(id)&utm_source=app")
    }

    @Test func checkConfigReadsTheSecretsFiles() throws {
        let fixture = try ReportingFixture()
        _ = try fixture.serveWithProviders().stop()
        let config = fixture.folder.file("providers.json")
        let checked = try LinkoutBinary.run(["check-config", "--config", config])
        #expect(checked.status == 0)
        // Its OK line says the webhooks are on, where.
        #expect(
            checked.stdout.contains("; paddle webhooks /webhooks/paddle; stripe webhooks /webhooks/stripe)\n")
                || checked.stdout.contains("; stripe webhooks /webhooks/stripe; paddle webhooks /webhooks/paddle)\n"), "\(checked.stdout)")
        fixture.folder.write("stripe-webhook-secrets", "sk_live_not_a_webhook_secret\n")
        fixture.folder.write("paddle-webhook-secrets", "\n")
        let result = try LinkoutBinary.run(["check-config", "--config", config])
        #expect(result.status == 1)
        #expect(
            result.stderr.contains(
                "paymentProviders.stripe.signingSecretsFile: \(fixture.folder.file("stripe-webhook-secrets")) holds a secret that is not a stripe webhook signing secret"
            ), "\(result.stderr)")
        #expect(result.stderr.contains("paymentProviders.paddle.signingSecretsFile:"), "\(result.stderr)")
    }
}

/// linkout's own signer (`ProviderSignature.header`), for checking it against the libraries.
enum LinkOutCoreSigner {
    static func header(_ body: Data, _ provider: ProviderEvents.Provider, _ timestamp: Int64, _ secrets: [String]) -> String {
        ProviderSignature.header(
            body: Array(body), timestamp: timestamp, secrets: secrets, provider: provider == .stripe ? .stripe : .paddle)
    }
}
