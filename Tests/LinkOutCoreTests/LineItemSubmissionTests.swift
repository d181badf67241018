import Foundation
import Testing

@testable import LinkOutCore

/// Line items as the checkout writes them, built from JSON text so the reader is tested, not bypassed.
enum LineItemSamples {
    static let now: Int64 = 1_760_000_000_000
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 24 * hour

    typealias Fields = [(String, String)]

    static let oneTimeBuy: Fields = [
        ("lineItemId", "\"buy-1\""), ("creationDate", "\(now - hour)"), ("eventType", "\"BUY\""),
        ("productType", "\"ONE_TIME_BUY\""), ("productIdentifier", "\"com.example.gems\""), ("quantity", "2"),
        ("pricingCurrency", "\"EUR\""), ("reportingCurrency", "\"EUR\""), ("amountTaxExclusive", "1000"),
        ("amountTaxInclusive", "1210"), ("netAmountTaxExclusive", "1000"), ("taxAmount", "210"),
        ("taxCountry", "\"ESP\""),
    ]

    static let subscriptionStart: Fields = [
        ("lineItemId", "\"sub-1\""), ("creationDate", "\(now - 2 * hour)"), ("eventType", "\"BUY\""),
        ("productType", "\"SUBSCRIPTION\""), ("productIdentifier", "\"com.example.pro\""), ("quantity", "1"),
        ("subscriptionEvent", "\"SUBSCRIPTION_START\""), ("subscriptionStartDate", "\(now - 2 * hour)"),
        ("subscriptionEndDate", "\(now - 2 * hour + 30 * day)"), ("subscriptionDaysOfPaidService", "0"),
        ("pricingCurrency", "\"EUR\""), ("reportingCurrency", "\"EUR\""), ("amountTaxExclusive", "9990"),
        ("amountTaxInclusive", "12090"), ("netAmountTaxExclusive", "9990"), ("taxAmount", "2100"),
        ("taxCountry", "\"NLD\""),
    ]

    static let renewal: Fields = edit(
        subscriptionStart,
        set: [
            "lineItemId": "\"sub-2\"", "referenceLineItemId": "\"sub-1\"", "creationDate": "\(now - hour)",
            "subscriptionEvent": "\"RENEWAL\"", "subscriptionStartDate": "\(now - 2 * hour + 30 * day)",
            "subscriptionEndDate": "\(now - 2 * hour + 60 * day)", "subscriptionDaysOfPaidService": "30",
        ])

    static let refund: Fields = [
        ("lineItemId", "\"refund-1\""), ("referenceLineItemId", "\"buy-1\""), ("creationDate", "\(now - 60_000)"),
        ("eventType", "\"REFUND\""), ("pricingCurrency", "\"EUR\""), ("reportingCurrency", "\"EUR\""),
        ("amountTaxExclusive", "300"), ("amountTaxInclusive", "360"), ("netAmountTaxExclusive", "300"),
        ("taxAmount", "60"), ("taxCountry", "\"ESP\""),
    ]

    /// `fields` with members replaced or appended (`set`) and removed (`remove`), order kept.
    static func edit(_ fields: Fields, set: [String: String] = [:], remove: Set<String> = []) -> Fields {
        var out = fields.filter { !remove.contains($0.0) }.map { ($0.0, set[$0.0] ?? $0.1) }
        for (key, value) in set.sorted(by: { $0.key < $1.key }) where !out.contains(where: { $0.0 == key }) {
            out.append((key, value))
        }
        return out
    }

    static func object(_ fields: Fields) -> String {
        "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    static func body(_ lines: [Fields], envelope: String = "\"externalPurchaseId\":\"token-a\"") -> String {
        "{\(envelope),\"lineItems\":[" + lines.map(object).joined(separator: ",") + "]}"
    }

    static func parse(_ text: String) -> Result<LineItemSubmission, LineItemError> {
        LineItemSubmission.parse(Array(text.utf8), now: now)
    }

    /// The problems of a body expected to be refused, as `field: message` lines.
    static func problems(_ text: String) -> [String] {
        switch parse(text) {
        case .success: return ["(accepted)"]
        case .failure(let error): return error.problems.map(\.description)
        }
    }

    static func problems(line fields: Fields) -> [String] { problems(body([fields])) }

    /// The line items of a body expected to be accepted.
    static func items(_ lines: [Fields]) throws -> [LineItem] {
        try parse(body(lines)).get().lineItems
    }
}

@Suite("LineItemSubmission")
struct LineItemSubmissionTests {
    typealias S = LineItemSamples

    @Test("a valid one-time buy is read with every field typed")
    func oneTimeBuy() throws {
        let submission = try S.parse(S.body([S.oneTimeBuy])).get()
        #expect(submission.reference == .externalPurchaseId("token-a"))
        #expect(
            submission.lineItems == [
                LineItem(
                    lineItemId: "buy-1", kind: .oneTimeBuy, creationDate: S.now - S.hour,
                    productIdentifier: "com.example.gems", quantity: 2, pricingCurrency: "EUR", reportingCurrency: "EUR",
                    amountTaxExclusive: 1000, amountTaxInclusive: 1210, netAmountTaxExclusive: 1000, taxAmount: 210,
                    taxCountry: "ESP")
            ])
        #expect(submission.lineItems[0].eventType == "BUY")
        #expect(submission.lineItems[0].productType == "ONE_TIME_BUY")
    }

    @Test("a subscription start and its renewal, and a refund, are read")
    func subscriptionAndRefund() throws {
        let items = try S.items([S.subscriptionStart, S.renewal, S.oneTimeBuy, S.refund])
        #expect(items.map(\.kind) == [.subscription, .subscription, .oneTimeBuy, .refund])
        #expect(items[0].subscriptionEvent == .subscriptionStart)
        #expect(items[1].subscriptionEvent == .renewal && items[1].referenceLineItemId == "sub-1")
        #expect(items[1].subscriptionDaysOfPaidService == 30)
        #expect(items[3].referenceLineItemId == "buy-1" && items[3].quantity == nil && items[3].productType == nil)
    }

    @Test("a linkoutRef may stand for the externalPurchaseId")
    func linkoutRef() throws {
        let submission = try S.parse(S.body([S.oneTimeBuy], envelope: "\"linkoutRef\":\"r-42\"")).get()
        #expect(submission.reference == .linkoutRef("r-42"))
    }

    @Test("the envelope: exactly one reference, lineItems 1 to 100, no unknown members")
    func envelope() {
        #expect(
            S.problems(S.body([S.oneTimeBuy], envelope: "\"externalPurchaseId\":\"a\",\"linkoutRef\":\"b\"")) == [
                "linkoutRef: must not come with externalPurchaseId: send exactly one of the two"
            ])
        #expect(
            S.problems("{\"lineItems\":[\(S.object(S.oneTimeBuy))]}") == [
                "externalPurchaseId: is required, or linkoutRef instead: which token these lines belong to"
            ])
        #expect(
            S.problems("{\"externalPurchaseId\":7,\"lineItems\":[],\"extra\":1}") == [
                "extra: is not a field of a line-item submission (externalPurchaseId or linkoutRef, and lineItems)",
                "externalPurchaseId: must be a string, not a number",
                "lineItems: must hold at least one line item",
            ])
        #expect(
            S.problems("{\"externalPurchaseId\":\"\",\"lineItems\":{}}") == [
                "externalPurchaseId: must not be empty", "lineItems: must be an array, not an object",
            ])
        #expect(S.problems("{\"externalPurchaseId\":\"a\"}") == ["lineItems: is required: an array of 1 to 100 line items"])
        let many = (0..<101).map { S.edit(S.oneTimeBuy, set: ["lineItemId": "\"b\($0)\""]) }
        #expect(S.problems(S.body(many)) == ["lineItems: must hold at most 100 line items, not 101"])
        #expect(S.problems("[]") == ["the body must be a JSON object, not an array"])
        #expect(S.problems("{").first?.hasPrefix("invalid JSON at line 1") == true)
        #expect(S.problems(S.body([[]]).replacingFirst("{}", with: "3")) == ["lineItems[0]: must be an object, not a number"])
    }

    @Test("every problem of every line is reported, with its path")
    func everyProblem() {
        let bad = S.edit(S.oneTimeBuy, set: ["quantity": "\"2\"", "taxCountry": "\"ES\"", "color": "\"red\""])
        #expect(
            S.problems(S.body([S.oneTimeBuy, bad])) == [
                "lineItems[1].color: is not a field of Apple's line items",
                "lineItems[1].quantity: must be an integer, not a string",
                "lineItems[1].taxCountry: must be an ISO 3166-1 alpha-3 code: \"ES\" looks like alpha-2, use ESP",
            ])
    }

    @Test("field types")
    func types() {
        let bad = S.edit(
            S.oneTimeBuy,
            set: [
                "amountTaxExclusive": "10.5", "lineItemId": "5", "restatement": "\"yes\"", "exchangeRate": "\"1.1\"",
            ])
        #expect(
            S.problems(line: bad) == [
                "lineItems[0].lineItemId: must be a string, not a number",
                "lineItems[0].exchangeRate: must be a number, not a string",
                "lineItems[0].amountTaxExclusive: must be an integer, not a number with a fraction or exponent",
                "lineItems[0].restatement: must be true or false, not a string",
            ])
        let twice = S.object(S.oneTimeBuy).replacingFirst("{", with: "{\"quantity\":1,")
        #expect(
            S.problems("{\"externalPurchaseId\":\"a\",\"lineItems\":[\(twice)]}") == [
                "lineItems[0].quantity: appears more than once"
            ])
    }

    @Test("kinds: eventType and productType, required and forbidden fields")
    func kinds() {
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["eventType": "\"SELL\""])) == [
                "lineItems[0].eventType: must be BUY or REFUND, not \"SELL\""
            ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["productType": "\"BUNDLE\""])) == [
                "lineItems[0].productType: must be ONE_TIME_BUY or SUBSCRIPTION, not \"BUNDLE\""
            ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, remove: ["productType"])) == [
                "lineItems[0].productType: is required when eventType is BUY: ONE_TIME_BUY or SUBSCRIPTION"
            ])
        #expect(
            S.problems(line: S.edit(S.refund, set: ["quantity": "1", "productIdentifier": "\"x\""])) == [
                "lineItems[0].productIdentifier: is not allowed on a refund",
                "lineItems[0].quantity: is not allowed on a refund",
            ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["subscriptionEvent": "\"RENEWAL\"", "referenceLineItemId": "\"x\""])) == [
                "lineItems[0].referenceLineItemId: is not allowed on a one-time buy",
                "lineItems[0].subscriptionEvent: is not allowed on a one-time buy",
            ])
        #expect(
            S.problems(line: S.edit(S.subscriptionStart, remove: ["subscriptionEndDate", "quantity"])) == [
                "lineItems[0].quantity: is required on a subscription",
                "lineItems[0].subscriptionEndDate: is required on a subscription",
            ])
        #expect(
            S.problems(line: S.edit(S.refund, remove: ["referenceLineItemId"])) == [
                "lineItems[0].referenceLineItemId: is required on a refund"
            ])
        #expect(
            S.problems(line: S.edit(S.subscriptionStart, set: ["subscriptionEvent": "\"PAUSE\""])) == [
                "lineItems[0].subscriptionEvent: must be one of SUBSCRIPTION_START, RENEWAL, SUBSCRIPTION_CHANGE, SUBSCRIPTION_PAYMENT, not \"PAUSE\""
            ])
        #expect(
            S.problems(line: [("eventType", "1")]) == [
                "lineItems[0].eventType: must be a string, not a number",
                "lineItems[0].amountTaxExclusive: is required", "lineItems[0].amountTaxInclusive: is required",
                "lineItems[0].creationDate: is required", "lineItems[0].lineItemId: is required",
                "lineItems[0].netAmountTaxExclusive: is required", "lineItems[0].pricingCurrency: is required",
                "lineItems[0].reportingCurrency: is required", "lineItems[0].taxAmount: is required",
                "lineItems[0].taxCountry: is required",
            ])
    }

    @Test("lengths and quantity")
    func lengths() {
        let long = String(repeating: "x", count: 129)
        #expect(
            S.problems(
                line: S.edit(
                    S.oneTimeBuy,
                    set: [
                        "lineItemId": "\"\(long)\"", "productIdentifier": "\"\"", "quantity": "0",
                    ])) == [
                    "lineItems[0].lineItemId: must be 1 to 128 characters, not 129",
                    "lineItems[0].productIdentifier: must be 1 to 256 characters, not 0",
                    "lineItems[0].quantity: must be 1 or more, not 0",
                ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["productIdentifier": "\"\(String(repeating: "p", count: 257))\""])) == [
                "lineItems[0].productIdentifier: must be 1 to 256 characters, not 257"
            ])
        #expect(
            S.problems(line: S.edit(S.refund, set: ["referenceLineItemId": "\"\""])) == [
                "lineItems[0].referenceLineItemId: must be 1 to 128 characters, not 0"
            ])
        #expect(S.problems(line: S.edit(S.oneTimeBuy, set: ["lineItemId": "\"\(String(repeating: "é", count: 128))\""])) == ["(accepted)"])
    }

    @Test("dates are milliseconds, and creationDate not ahead of now by more than 5 minutes")
    func dates() {
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["creationDate": "1759999000"])) == [
                "lineItems[0].creationDate: 1759999000 looks like Unix seconds: dates are Unix milliseconds (at least 1000000000000)"
            ])
        #expect(
            S.problems(line: S.edit(S.subscriptionStart, set: ["subscriptionStartDate": "1759999000"])) == [
                "lineItems[0].subscriptionStartDate: 1759999000 looks like Unix seconds: dates are Unix milliseconds (at least 1000000000000)"
            ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["creationDate": "\(S.now + 300_001)"])) == [
                "lineItems[0].creationDate: is more than 5 minutes in the future (\(S.now + 300_001) > now \(S.now))"
            ])
        #expect(S.problems(line: S.edit(S.oneTimeBuy, set: ["creationDate": "\(S.now + 300_000)"])) == ["(accepted)"])
    }

    @Test("amounts: milli-units not below 0, inclusive = exclusive + tax, net not above exclusive")
    func amounts() {
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["amountTaxInclusive": "1200"])) == [
                "lineItems[0].amountTaxInclusive: must equal amountTaxExclusive + taxAmount (1000 + 210), not 1200"
            ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["netAmountTaxExclusive": "1010"])) == [
                "lineItems[0].netAmountTaxExclusive: must not exceed amountTaxExclusive (1000), not 1010"
            ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["taxAmount": "-210", "amountTaxInclusive": "790"])) == [
                "lineItems[0].taxAmount: must be 0 or more milli-units, not -210"
            ])
    }

    @Test("amounts in cents (or whole yen) instead of milli-units are refused, with the amount meant")
    func amountsInMinorUnits() {
        // EUR 2.99 posted in cents: a tenth of the sale would have gone to Apple.
        #expect(
            S.problems(
                line: S.edit(
                    S.oneTimeBuy,
                    set: [
                        "amountTaxExclusive": "247", "amountTaxInclusive": "299", "netAmountTaxExclusive": "247", "taxAmount": "52",
                    ])) == [
                    "lineItems[0].amountTaxExclusive: 247 looks like cents: 2.47 EUR is 2470 (amounts are milli-units, thousandths of a EUR)",
                    "lineItems[0].amountTaxInclusive: 299 looks like cents: 2.99 EUR is 2990 (amounts are milli-units, thousandths of a EUR)",
                    "lineItems[0].netAmountTaxExclusive: 247 looks like cents: 2.47 EUR is 2470 (amounts are milli-units, thousandths of a EUR)",
                    "lineItems[0].taxAmount: 52 looks like cents: 0.52 EUR is 520 (amounts are milli-units, thousandths of a EUR)",
                ])
        // JPY has no minor unit: 500 yen is 500000 milli-units.
        let yen = S.edit(
            S.oneTimeBuy,
            set: [
                "pricingCurrency": "\"JPY\"", "reportingCurrency": "\"JPY\"", "amountTaxExclusive": "500000",
                "amountTaxInclusive": "550000", "netAmountTaxExclusive": "500000", "taxAmount": "50000", "taxCountry": "\"JPN\"",
            ])
        #expect(S.problems(line: yen) == ["(accepted)"])
        #expect(
            S.problems(
                line: S.edit(yen, set: ["amountTaxExclusive": "500", "amountTaxInclusive": "50500", "netAmountTaxExclusive": "500"])) == [
                    "lineItems[0].amountTaxExclusive: 500 looks like whole JPY: 500 JPY is 500000 (amounts are milli-units, thousandths of a JPY; JPY has no minor unit)",
                    "lineItems[0].amountTaxInclusive: 50500 looks like whole JPY: 50500 JPY is 50500000 (amounts are milli-units, thousandths of a JPY; JPY has no minor unit)",
                    "lineItems[0].netAmountTaxExclusive: 500 looks like whole JPY: 500 JPY is 500000 (amounts are milli-units, thousandths of a JPY; JPY has no minor unit)",
                ])
        // A converted amount is the rate's product, not a price: any milli-unit goes.
        #expect(
            S.problems(
                line: S.edit(
                    S.oneTimeBuy,
                    set: [
                        "pricingCurrency": "\"ISK\"", "exchangeRate": "0.0071", "amountTaxExclusive": "1001", "amountTaxInclusive": "1211",
                        "netAmountTaxExclusive": "1001",
                    ])) == ["(accepted)"])
        // Whole cents, a refund of 5 cents, and zero are fine.
        #expect(
            S.problems(
                line: S.edit(
                    S.refund,
                    set: [
                        "amountTaxExclusive": "50", "amountTaxInclusive": "60", "netAmountTaxExclusive": "0", "taxAmount": "10",
                    ])) == ["(accepted)"])
    }

    @Test("currencies: ISO 4217, Apple's reporting list, and the exchange rate only across currencies")
    func currencies() {
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["pricingCurrency": "\"XYZ\"", "reportingCurrency": "\"ABC\""])) == [
                "lineItems[0].pricingCurrency: must be an active ISO 4217 code in capitals, such as EUR, not \"XYZ\"",
                "lineItems[0].reportingCurrency: must be one of Apple's reporting currencies, such as EUR or USD, not \"ABC\"",
            ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["reportingCurrency": "\"USD\"", "exchangeRate": "1.17"])) == [
                "lineItems[0].reportingCurrency: must equal pricingCurrency EUR: Apple takes reports in EUR, so no conversion",
                "lineItems[0].exchangeRate: is only allowed when reportingCurrency differs from pricingCurrency",
            ])
        // Icelandic krónur are not one of Apple's reporting currencies: EUR or USD, with a rate.
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["pricingCurrency": "\"ISK\"", "reportingCurrency": "\"ISK\""])) == [
                "lineItems[0].reportingCurrency: must be one of Apple's reporting currencies, such as EUR or USD, not \"ISK\"",
                "lineItems[0].reportingCurrency: must be EUR or USD: Apple does not take reports in ISK",
                "lineItems[0].exchangeRate: is required when reportingCurrency differs from pricingCurrency (pricing × rate = reporting)",
            ])
        #expect(
            S.problems(
                line: S.edit(S.oneTimeBuy, set: ["pricingCurrency": "\"ISK\"", "reportingCurrency": "\"GBP\"", "exchangeRate": "0"])) == [
                    "lineItems[0].exchangeRate: must be greater than 0, not 0.0",
                    "lineItems[0].reportingCurrency: must be EUR or USD: Apple does not take reports in ISK",
                ])
        #expect(S.problems(line: S.edit(S.oneTimeBuy, set: ["pricingCurrency": "\"ISK\"", "exchangeRate": "0.0071"])) == ["(accepted)"])
    }

    @Test("taxCountry: an assigned alpha-3 code")
    func taxCountry() {
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["taxCountry": "\"nl\""])) == [
                "lineItems[0].taxCountry: must be an ISO 3166-1 alpha-3 code: \"nl\" looks like alpha-2, use NLD"
            ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["taxCountry": "\"esp\""])) == [
                "lineItems[0].taxCountry: must be in capitals: use ESP"
            ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["taxCountry": "\"EUR\""])) == [
                "lineItems[0].taxCountry: must be an assigned ISO 3166-1 alpha-3 code, such as ESP or NLD, not \"EUR\""
            ])
    }

    @Test("the shipped code lists: 249 alpha-3 codes for the 249 alpha-2 ones, Apple's 44 currencies all ISO 4217")
    func codeLists() {
        #expect(CountryCodes.iso3166Alpha3.count == 249)
        #expect(Set(CountryCodes.alpha3ByAlpha2.keys.map { $0.lowercased() }) == CountryCodes.iso3166Alpha2)
        #expect(CountryCodes.alpha3ByAlpha2["ES"] == "ESP" && CountryCodes.alpha3ByAlpha2["GB"] == "GBR")
        #expect(CurrencyCodes.appleReporting.count == 44)
        #expect(CurrencyCodes.appleReporting.isSubset(of: CurrencyCodes.iso4217Active))
        #expect(!CurrencyCodes.iso4217Active.contains("HRK") && CurrencyCodes.iso4217Active.contains("XCG"))
    }

    @Test("subscriptions: start not after end, paid days 0 at the start and never negative")
    func subscriptionRules() {
        let start = S.now - 2 * S.hour
        #expect(
            S.problems(line: S.edit(S.subscriptionStart, set: ["subscriptionEndDate": "\(start - 1)"])) == [
                "lineItems[0].subscriptionEndDate: must not be before subscriptionStartDate (\(start - 1) < \(start))"
            ])
        #expect(
            S.problems(line: S.edit(S.subscriptionStart, set: ["subscriptionDaysOfPaidService": "3"])) == [
                "lineItems[0].subscriptionDaysOfPaidService: must be 0 on SUBSCRIPTION_START, not 3: it counts paid days before this line"
            ])
        #expect(
            S.problems(line: S.edit(S.renewal, set: ["subscriptionDaysOfPaidService": "-1"])) == [
                "lineItems[0].subscriptionDaysOfPaidService: must be 0 or more, not -1"
            ])
    }

    @Test("erroneouslySubmitted needs restatement")
    func withdrawalNeedsRestatement() {
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["erroneouslySubmitted": "true"])) == [
                "lineItems[0].erroneouslySubmitted: true requires restatement: true (a withdrawal restates the line)"
            ])
        #expect(
            S.problems(line: S.edit(S.oneTimeBuy, set: ["erroneouslySubmitted": "true", "restatement": "false"])) == [
                "lineItems[0].erroneouslySubmitted: true requires restatement: true (a withdrawal restates the line)"
            ])
    }

    @Test("canonical JSON: Apple's order, only present fields, and it reads back equal")
    func roundTrip() throws {
        let items = try S.items([
            S.edit(S.oneTimeBuy, set: ["pricingCurrency": "\"ISK\"", "exchangeRate": "0.0071", "restatement": "true"]),
            S.renewal, S.refund,
            S.edit(S.oneTimeBuy, set: ["lineItemId": "\"quote\\\"d\\u0001é\"", "restatement": "true", "erroneouslySubmitted": "true"]),
        ])
        #expect(
            String(decoding: items[0].json, as: UTF8.self)
                == "{\"lineItemId\":\"buy-1\",\"creationDate\":\(S.now - S.hour),\"eventType\":\"BUY\",\"productType\":\"ONE_TIME_BUY\","
                + "\"productIdentifier\":\"com.example.gems\",\"quantity\":2,\"pricingCurrency\":\"ISK\",\"reportingCurrency\":\"EUR\","
                + "\"exchangeRate\":0.0071,\"amountTaxExclusive\":1000,\"amountTaxInclusive\":1210,\"netAmountTaxExclusive\":1000,"
                + "\"taxAmount\":210,\"taxCountry\":\"ESP\",\"restatement\":true}")
        #expect(
            String(decoding: items[2].json, as: UTF8.self)
                == "{\"lineItemId\":\"refund-1\",\"referenceLineItemId\":\"buy-1\",\"creationDate\":\(S.now - 60_000),\"eventType\":\"REFUND\","
                + "\"pricingCurrency\":\"EUR\",\"reportingCurrency\":\"EUR\",\"amountTaxExclusive\":300,\"amountTaxInclusive\":360,"
                + "\"netAmountTaxExclusive\":300,\"taxAmount\":60,\"taxCountry\":\"ESP\"}")
        for item in items {
            #expect(try LineItem(json: item.json) == item)
            #expect(try LineItem(json: item.json).json == item.json)
        }
        #expect(items[3].lineItemId == "quote\"d\u{1}é")
    }

    @Test("decoding stored JSON reports what is wrong with it")
    func decodingErrors() {
        #expect(throws: LineItemError(problems: [LineItemProblem(field: "quantity", message: "is not allowed on a refund")])) {
            try LineItem(json: Array(S.object(S.edit(S.refund, set: ["quantity": "1"])).utf8))
        }
        #expect(throws: LineItemError(problems: [LineItemProblem(field: "", message: "must be an object, not an array")])) {
            try LineItem(json: Array("[]".utf8))
        }
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
