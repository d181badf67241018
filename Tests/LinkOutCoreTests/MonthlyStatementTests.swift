import Testing

@testable import LinkOutCore

/// The monthly statement's rules, line by line: the window to the millisecond, refunds in their sale's
/// window, withdrawals left out, the terms' first day, both tiers, two currencies, and totals that are
/// exactly the sums of the lines.
@Suite("MonthlyStatement")
struct MonthlyStatementTests {
    static let october = UTCMonth("2026-10")!
    static let day: Int64 = 86_400_000
    static let eu = CommissionRegion(
        name: "EU", countries: ["nl", "de"], from: UTCDate.parseDay("2026-10-01")!, ratePPM: 150_000, reducedRatePPM: 100_000, windowDays: 7
    )
    static let jp = CommissionRegion(
        name: "JP", countries: ["jp"], from: UTCDate.parseDay("2025-12-18")!, ratePPM: 150_000, reducedRatePPM: 100_000, windowDays: 7)
    static let settings = CommissionSettings(regions: [eu, jp])
    static let apps = [
        AllowedApp(bundleId: "com.big", appAppleId: 1), AllowedApp(bundleId: "com.small", appAppleId: 2, commissionTier: .reduced),
    ]

    /// A line as the checkout stores it (tax 21 %, amounts in milli-units of `currency`).
    static func item(
        _ id: String, at created: Int64, amount: Int64, currency: String = "EUR", refunds: String? = nil, withdrawn: Bool = false
    ) throws -> LineItem {
        let tax = amount / 100 * 21
        var fields = [
            #""lineItemId":"\#(id)""#, #""creationDate":\#(created)"#,
            #""pricingCurrency":"\#(currency)","reportingCurrency":"\#(currency)""#,
            #""amountTaxExclusive":\#(amount),"amountTaxInclusive":\#(amount + tax),"netAmountTaxExclusive":\#(amount),"taxAmount":\#(tax)"#,
            #""taxCountry":"NLD""#,
        ]
        if let refunds {
            fields += [#""eventType":"REFUND""#, #""referenceLineItemId":"\#(refunds)""#]
        } else {
            fields += [#""eventType":"BUY","productType":"ONE_TIME_BUY","productIdentifier":"p","quantity":1"#]
        }
        if withdrawn { fields.append(#""restatement":true,"erroneouslySubmitted":true"#) }
        return try LineItem(json: Array(("{" + fields.joined(separator: ",") + "}").utf8))
    }

    static func sold(
        _ item: LineItem, token: String, tap: Int64, app: String = "com.big", country: String? = "nl", refunded: Int64? = nil,
        type: String? = nil
    ) -> MonthlyStatement.SoldLine {
        MonthlyStatement.SoldLine(
            bundleId: app, externalPurchaseId: token, tapAt: tap, country: country, item: item, refundedCreatedAt: refunded, tokenType: type
        )
    }

    @Test("a sale is in the window up to windowDays × 24 h after the tap, to the millisecond")
    func windowEdges() throws {
        let tap = Self.october.day(3) + 12_345
        let lines = [
            Self.sold(try Self.item("edge", at: tap + 7 * Self.day, amount: 10_000), token: "a", tap: tap),
            Self.sold(try Self.item("past", at: tap + 7 * Self.day + 1, amount: 20_000), token: "b", tap: tap),
            Self.sold(try Self.item("same", at: tap, amount: 30_000), token: "c", tap: tap),
        ]
        let statement = MonthlyStatement.make(month: Self.october, tokens: [], lines: lines, commission: Self.settings, apps: Self.apps)
        #expect(statement.lines.map(\.inWindow) == [true, true, false], "sorted by date: same, edge, past")
        #expect(statement.lines.map(\.lineItemId) == ["same", "edge", "past"])
        let row = try #require(statement.rows.first)
        #expect(row.salesInWindow == 40_000 && row.salesOutsideWindow == 20_000)
        // 15 % of 40.00 EUR in the window; nothing on the 20.00 outside it.
        #expect(row.commission == 6_000)
    }

    @Test("a refund counts in its own month, in the window its sale was in; a withdrawn line not at all")
    func refundsAndWithdrawals() throws {
        let tap = Self.october.day(5)
        let lines = [
            Self.sold(try Self.item("buy", at: tap + Self.day, amount: 100_000), token: "a", tap: tap),
            // Refunded 20 days after the tap, of a sale made in the window: in the window.
            Self.sold(
                try Self.item("refund", at: tap + 20 * Self.day, amount: 30_000, refunds: "buy"), token: "a", tap: tap,
                refunded: tap + Self.day),
            Self.sold(try Self.item("oops", at: tap + Self.day, amount: 999_990, withdrawn: true), token: "a", tap: tap),
            // A refund dated in November is November's.
            Self.sold(
                try Self.item("later", at: Self.october.end + 1, amount: 10_000, refunds: "buy"), token: "a", tap: tap,
                refunded: tap + Self.day),
        ]
        let statement = MonthlyStatement.make(month: Self.october, tokens: [], lines: lines, commission: Self.settings, apps: Self.apps)
        #expect(statement.lines.map(\.lineItemId) == ["buy", "refund"])
        #expect(statement.lines.map(\.amount) == [100_000, -30_000])
        let row = try #require(statement.rows.first)
        #expect(row.salesInWindow == 70_000 && row.salesOutsideWindow == 0)
        #expect(row.commission == 15_000 - 4_500)
        #expect(row.tokensPurchased == 1)
    }

    @Test("the reduced tier, the terms' first day, regions, currencies and tokens, with totals the lines' sums")
    func tiersRegionsAndCurrencies() throws {
        let beforeTerms = Self.eu.linkOut.from - 1
        let tap = Self.october.day(10)
        let lines = [
            Self.sold(try Self.item("big-eur", at: tap + 1000, amount: 12_340), token: "a", tap: tap),
            Self.sold(try Self.item("small-eur", at: tap + 1000, amount: 12_340), token: "b", tap: tap, app: "com.small"),
            // Tapped the day before the EU's terms: sales counted, no commission.
            Self.sold(try Self.item("early", at: Self.october.day(2), amount: 50_000), token: "c", tap: beforeTerms),
            Self.sold(try Self.item("yen", at: tap + 1000, amount: 1_234_000, currency: "JPY"), token: "d", tap: tap, country: "jp"),
            Self.sold(try Self.item("sek", at: tap + 1000, amount: 99_990, currency: "SEK"), token: "e", tap: tap, country: "de"),
            Self.sold(try Self.item("us", at: tap + 1000, amount: 5_000, currency: "USD"), token: "f", tap: tap, country: "us"),
        ]
        let tokens = [
            MonthlyStatement.TokenCount(bundleId: "com.big", country: "nl", visited: true, count: 7),
            MonthlyStatement.TokenCount(bundleId: "com.big", country: "de", visited: false, count: 3),
            MonthlyStatement.TokenCount(bundleId: "com.big", country: "jp", visited: false, count: 2),
            MonthlyStatement.TokenCount(bundleId: "com.big", country: "fr", visited: true, count: 4),
            MonthlyStatement.TokenCount(bundleId: "com.small", country: "nl", visited: true, count: 1),
        ]
        let statement = MonthlyStatement.make(month: Self.october, tokens: tokens, lines: lines, commission: Self.settings, apps: Self.apps)
        func row(_ app: String, _ region: String?, _ currency: String?) -> MonthlyStatement.Row? {
            statement.rows.first { $0.bundleId == app && $0.region == region && $0.currency == currency }
        }
        // 15 % of 12.34 is 1.851: 1.85 EUR; 10 % of it 1.234: 1.23 EUR. 12.34 + 50.00 in the EU for com.big.
        #expect(
            row("com.big", "EU", "EUR").map { [$0.salesInWindow, $0.commission, $0.tokens, $0.tokensVisited] } == [62_340, 1_850, 10, 7])
        #expect(row("com.small", "EU", "EUR")?.commission == 1_230)
        // 15 % of 1,234 yen is 185.1: 185 yen.
        #expect(row("com.big", "JP", "JPY").map { [$0.commission, $0.tokens] } == [185_000, 2])
        #expect(row("com.big", "EU", "SEK")?.commission == 15_000, "15 % of 99.99 SEK is 14.9985: 15.00")
        // No region, no window: sales shown outside it, no commission; France is in no configured region here.
        #expect(row("com.big", nil, "USD").map { [$0.salesInWindow, $0.salesOutsideWindow, $0.commission] } == [0, 5_000, 0])
        #expect(row("com.big", nil, "USD")?.tokens == 4, "fr's tokens count in the same no-region group")
        for row in statement.rows where row.currency != nil {
            let lines = statement.lines.filter { $0.bundleId == row.bundleId && $0.region == row.region && $0.currency == row.currency }
            #expect(lines.map(\.commission).reduce(0, +) == row.commission, "\(row)")
            #expect(lines.filter(\.inWindow).map(\.amount).reduce(0, +) == row.salesInWindow)
        }
    }

    @Test("a subscription past the region's paid days is charged the reduced rate, its refund too; other lines their tier's")
    func subscriptionsAfterYearOne() throws {
        var jp = Self.jp
        jp.linkOut.subscriptionReducedAfterPaidDays = 365
        let settings = CommissionSettings(regions: [Self.eu, jp])
        let tap = Self.october.day(8)
        func subscription(_ id: String, paidDays: Int64, amount: Int64 = 1_000_000) -> LineItem {
            LineItem(
                lineItemId: id, kind: .subscription, creationDate: tap + 1000, productIdentifier: "plus", quantity: 1,
                subscriptionEvent: paidDays == 0 ? .subscriptionStart : .renewal, subscriptionStartDate: tap,
                subscriptionEndDate: tap + 30 * Self.day,
                subscriptionDaysOfPaidService: paidDays, pricingCurrency: "JPY", reportingCurrency: "JPY", amountTaxExclusive: amount,
                amountTaxInclusive: amount, netAmountTaxExclusive: amount, taxAmount: 0, taxCountry: "JPN")
        }
        let refund = LineItem(
            lineItemId: "refund", kind: .refund, referenceLineItemId: "second-year", creationDate: tap + 2000, pricingCurrency: "JPY",
            reportingCurrency: "JPY", amountTaxExclusive: 1_000_000, amountTaxInclusive: 1_000_000, netAmountTaxExclusive: 1_000_000,
            taxAmount: 0, taxCountry: "JPN")
        let lines = [
            Self.sold(subscription("first-year", paidDays: 364), token: "a", tap: tap, country: "jp"),
            Self.sold(subscription("second-year", paidDays: 365), token: "b", tap: tap, country: "jp"),
            MonthlyStatement.SoldLine(
                bundleId: "com.big", externalPurchaseId: "b", tapAt: tap, country: "jp", item: refund, refundedCreatedAt: tap + 1000,
                refundedPaidDays: 365),
            // The EU has no such rule: a long subscription there pays the app's tier's rate.
            Self.sold(subscription("eu-long", paidDays: 2000), token: "c", tap: tap, country: "nl"),
        ]
        let statement = MonthlyStatement.make(month: Self.october, tokens: [], lines: lines, commission: settings, apps: Self.apps)
        let rates = Dictionary(uniqueKeysWithValues: statement.lines.map { ($0.lineItemId, $0.ratePPM) })
        #expect(rates == ["first-year": 150_000, "second-year": 100_000, "refund": 100_000, "eu-long": 150_000], "\(rates)")
        // 15 % of 1,000 yen, then 10 % of 1,000 yen less its refund at the same 10 %.
        #expect(statement.rows.first { $0.region == "JP" }?.commission == 150_000)
    }

    @Test("each token type's kind: no type, ACQUISITION, SERVICES, LINK_OUT and outOfApp are link-outs; IN_APP and withinApp in-app")
    func kindsOfTokenType() {
        for type in [nil, "ACQUISITION", "SERVICES", "LINK_OUT", "OUT_OF_APP", "OUTOFAPP", "SOMETHING_NEW"] as [String?] {
            #expect(SaleKind(tokenType: type) == .linkOut, "\(type ?? "nil")")
        }
        for type in ["IN_APP", "WITHIN_APP", "WITHINAPP"] { #expect(SaleKind(tokenType: type) == .inApp, "\(type)") }
    }

    @Test("an IN_APP token's sales are charged at the region's in-app terms, every sale, no window; a link-out's as before")
    func inAppTermsChargeEverySale() throws {
        var jp = Self.jp
        jp.inApp = CommissionTerms(from: jp.linkOut.from, ratePPM: 200_000, reducedRatePPM: 100_000, windowDays: nil)
        let settings = CommissionSettings(regions: [Self.eu, jp])
        let tap = Self.october.day(2)
        let lines = [
            // 20 days after the token: far past a link-out's window, charged all the same on the transaction.
            Self.sold(
                try Self.item("in-app", at: tap + 20 * Self.day, amount: 1_000_000, currency: "JPY"), token: "a", tap: tap, country: "jp",
                type: "IN_APP"),
            Self.sold(
                try Self.item("in-app-small", at: tap + Self.day, amount: 1_000_000, currency: "JPY"), token: "b", tap: tap,
                app: "com.small",
                country: "jp", type: "IN_APP"),
            Self.sold(
                try Self.item("link-out", at: tap + Self.day, amount: 1_000_000, currency: "JPY"), token: "c", tap: tap, country: "jp",
                type: "LINK_OUT"),
            Self.sold(
                try Self.item("link-out-late", at: tap + 8 * Self.day, amount: 1_000_000, currency: "JPY"), token: "c", tap: tap,
                country: "jp",
                type: "LINK_OUT"),
        ]
        let tokens = [
            MonthlyStatement.TokenCount(bundleId: "com.big", country: "jp", visited: false, count: 1, tokenType: "IN_APP"),
            MonthlyStatement.TokenCount(bundleId: "com.big", country: "jp", visited: true, count: 2, tokenType: "LINK_OUT"),
            MonthlyStatement.TokenCount(bundleId: "com.big", country: "jp", visited: true, count: 3),
        ]
        let statement = MonthlyStatement.make(month: Self.october, tokens: tokens, lines: lines, commission: settings, apps: Self.apps)
        let byId = Dictionary(uniqueKeysWithValues: statement.lines.map { ($0.lineItemId, $0) })
        #expect(
            byId["in-app"].map { [$0.kind == .inApp ? 1 : 0, $0.inWindow ? 1 : 0, $0.ratePPM, $0.commission] } == [1, 1, 200_000, 200_000])
        #expect(byId["in-app-small"]?.ratePPM == 100_000, "the reduced tier's in-app rate")
        #expect(byId["link-out"].map { [$0.kind == .linkOut ? 1 : 0, $0.ratePPM] } == [1, 150_000])
        #expect(byId["link-out-late"].map { [$0.inWindow ? 1 : 0, $0.ratePPM] } == [0, 0], "a link-out keeps its window")
        func row(_ app: String, _ kind: SaleKind) -> MonthlyStatement.Row? {
            statement.rows.first { $0.bundleId == app && $0.region == "JP" && $0.kind == kind }
        }
        #expect(
            row("com.big", .inApp).map { [$0.tokens, $0.salesInWindow, $0.salesOutsideWindow, $0.commission] } == [
                1, 1_000_000, 0, 200_000,
            ])
        #expect(
            row("com.big", .linkOut).map { [$0.tokens, $0.tokensVisited, $0.salesInWindow, $0.salesOutsideWindow, $0.commission] }
                == [5, 5, 1_000_000, 1_000_000, 150_000])
        #expect(statement.inAppWithoutTerms.isEmpty)
        let json = statement.json(lines: true).text
        #expect(json.contains(#""region":"JP","kind":"inApp""#) && json.contains(#""region":"JP","kind":"linkOut""#), "\(json)")
        #expect(statement.csv(lines: true).contains("com.big,JP,inApp,a,in-app,BUY,"), "\(statement.csv(lines: true))")

        // A region without in-app terms charges its in-app sales nothing, not a link-out's rate, and says so.
        let without = MonthlyStatement.make(month: Self.october, tokens: tokens, lines: lines, commission: Self.settings, apps: Self.apps)
        let inApp = try #require(without.lines.first { $0.lineItemId == "in-app" })
        #expect(inApp.kind == .inApp && inApp.ratePPM == 0 && !inApp.inWindow)
        #expect(without.inAppWithoutTerms == ["JP"])
    }

    @Test("an in-app term's from is its own: a token before it is charged nothing")
    func inAppFrom() throws {
        var eu = Self.eu
        eu.inApp = CommissionTerms(from: Self.october.day(15), ratePPM: 200_000, reducedRatePPM: 100_000, windowDays: nil)
        let lines = [
            Self.sold(
                try Self.item("early", at: Self.october.day(20), amount: 10_000), token: "a", tap: Self.october.day(14), type: "IN_APP"),
            Self.sold(
                try Self.item("on-time", at: Self.october.day(20), amount: 10_000), token: "b", tap: Self.october.day(15), type: "IN_APP"),
        ]
        let statement = MonthlyStatement.make(
            month: Self.october, tokens: [], lines: lines, commission: CommissionSettings(regions: [eu]), apps: Self.apps)
        #expect(statement.lines.map(\.ratePPM) == [0, 200_000])
    }

    @Test("taps are a link-out's, on the row of the link's app when it names one, of no app when not; one app's statement only its links'")
    func tapsBelongToTheLinksApp() {
        let links = [
            Link(id: "us", path: "/us", country: "us", destinations: [], token: .notExpected, app: "com.big"),
            Link(id: "us-other", path: "/us2", country: "us", destinations: [], token: .notExpected),
        ]
        let taps = [
            MonthlyStatement.TapCount(link: "us", country: "us", count: 4),
            MonthlyStatement.TapCount(link: "us-other", country: "us", count: 2),
            MonthlyStatement.TapCount(link: "gone", country: "us", count: 1),
        ]
        let tokens = [MonthlyStatement.TokenCount(bundleId: "com.big", country: "us", visited: true, count: 1)]
        let statement = MonthlyStatement.make(
            month: Self.october, tokens: tokens, lines: [], taps: taps, commission: Self.settings, apps: Self.apps, links: links)
        #expect(
            statement.rows.map { [$0.bundleId, $0.region ?? "-", $0.kind.rawValue, "\($0.tokens)", "\($0.taps)"] }
                == [["", "-", "linkOut", "0", "3"], ["com.big", "-", "linkOut", "1", "4"]], "\(statement.rows)")
        let one = MonthlyStatement.make(
            month: Self.october, tokens: [], lines: [], taps: taps, commission: Self.settings, apps: Self.apps, links: links, app: "com.big"
        )
        #expect(one.rows.map { [$0.bundleId, "\($0.taps)"] } == [["com.big", "4"]])
    }

    @Test("sandbox tokens and their sales are left out, counted beside the rows")
    func sandboxOwesNothing() throws {
        let tap = Self.october.day(4)
        let lines = [
            Self.sold(try Self.item("real", at: tap + 1000, amount: 10_000), token: "a", tap: tap),
            MonthlyStatement.SoldLine(
                bundleId: "com.big", externalPurchaseId: "SANDBOX_b", tapAt: tap, country: "nl",
                item: try Self.item("test", at: tap + 1000, amount: 990_000), refundedCreatedAt: nil, environment: .sandbox),
        ]
        let tokens = [
            MonthlyStatement.TokenCount(bundleId: "com.big", country: "nl", visited: true, count: 2),
            MonthlyStatement.TokenCount(bundleId: "com.big", country: "nl", visited: true, count: 5, environment: .sandbox),
            MonthlyStatement.TokenCount(bundleId: "com.small", country: "de", visited: false, count: 1, environment: .sandbox),
        ]
        let statement = MonthlyStatement.make(month: Self.october, tokens: tokens, lines: lines, commission: Self.settings, apps: Self.apps)
        #expect(statement.lines.map(\.lineItemId) == ["real"])
        #expect(statement.rows.map { [$0.tokens, $0.tokensVisited, $0.salesInWindow, $0.commission] } == [[2, 2, 10_000, 1_500]])
        #expect(statement.rows.map(\.bundleId) == ["com.big"], "an app with sandbox tokens only has no row")
        #expect(statement.sandboxTokens == 6)
        #expect(statement.json(lines: false).text.contains(#""sandboxTokens":6"#))
    }

    @Test("commission rounds half away from zero to the currency's smallest unit, in integers")
    func rounding() {
        #expect(MonthlyStatement.commissionOf(2_470, ratePPM: 150_000, currency: "EUR") == 370)  // 0.3705 → 0.37
        #expect(MonthlyStatement.commissionOf(2_500, ratePPM: 150_000, currency: "EUR") == 380)  // 0.375 → 0.38
        #expect(MonthlyStatement.commissionOf(-2_500, ratePPM: 150_000, currency: "EUR") == -380)
        #expect(MonthlyStatement.commissionOf(3_000, ratePPM: 150_000, currency: "JPY") == 0)  // 0.45 yen → 0
        #expect(MonthlyStatement.commissionOf(10_000, ratePPM: 150_000, currency: "JPY") == 2_000)  // 1.5 yen → 2
        #expect(MonthlyStatement.commissionOf(Int64.max / 2, ratePPM: 999_999, currency: "EUR") > 0, "no overflow")
        #expect(MonthlyStatement.rate(150_000) == "0.15" && MonthlyStatement.rate(0) == "0" && MonthlyStatement.rate(123_456) == "0.123456")
        #expect(MonthlyStatement.amount(74_100, currency: "EUR") == "74.10" && MonthlyStatement.amount(500_000, currency: "JPY") == "500")
        #expect(MonthlyStatement.amount(-1_234, currency: "EUR") == "-1.234")
    }

    @Test("month close: the deadline is the end of closeDay of the next month; days left round up; sandbox left out")
    func monthClose() {
        let states = MonthClose.states(
            [
                MonthClose.Count(month: Self.october, tokens: 10, reported: 9),
                MonthClose.Count(month: UTCMonth("2026-09")!, tokens: 5, reported: 5),
                MonthClose.Count(month: Self.october, tokens: 4, reported: 0, environment: .sandbox),
            ],
            closeDay: 15, now: UTCDate.parse("2026-11-13T12:00:00Z")!)
        #expect(states[0].deadline == UTCDate.parse("2026-11-16T00:00:00Z")!)
        #expect(states[0].daysLeft == 3 && states[0].atRisk && states[0].outstanding == 1)
        #expect(states[1].closed && !states[1].atRisk)
        #expect(states.count == 2, "sandbox tokens have no deadline")
        #expect(UTCMonth("2026-12")!.next == UTCMonth("2027-01")! && UTCMonth("2026-13") == nil && UTCMonth("26-10") == nil)
        #expect(
            UTCMonth(containing: Self.october.end - 1) == Self.october && UTCMonth(containing: Self.october.end) == UTCMonth("2026-11")!)
    }
}
