import Testing

@testable import LinkOutCore

@Suite("LineItemHistoryRules")
struct LineItemHistoryRulesTests {
    typealias S = LineItemSamples
    static let tokenCreated = S.now - S.day

    static func item(_ fields: S.Fields) throws -> LineItem {
        try #require(try S.items([fields]).first)
    }

    static func check(
        _ lines: [LineItem], stored: [StoredLineItem] = [], token: String = "token-a",
        expiration: Int64? = nil, now: Int64 = S.now
    ) -> LineItemCheck {
        LineItemHistoryRules.check(
            lines, externalPurchaseId: token, stored: stored, tokenCreationDate: tokenCreated,
            tokenExpirationDate: expiration, now: now)
    }

    static func stored(_ item: LineItem, token: String = "token-a") -> StoredLineItem {
        StoredLineItem(externalPurchaseId: token, lineItem: item)
    }

    @Test("new lines: a buy, a subscription start and renewal, and a refund of the buy, all in one submission")
    func newLines() throws {
        let lines = try S.items([S.oneTimeBuy, S.subscriptionStart, S.renewal, S.refund])
        let result = Self.check(lines)
        #expect(result.problems == [])
        #expect(result.accepted.map(\.disposition) == [.new, .new, .new, .new])
        #expect(result.accepted.map(\.index) == [0, 1, 2, 3])
    }

    @Test("a resend of stored lines is unchanged: stored once")
    func idempotent() throws {
        let buy = try Self.item(S.oneTimeBuy)
        let result = Self.check([buy], stored: [Self.stored(buy)])
        #expect(result.problems == [])
        #expect(result.accepted == [AcceptedLineItem(index: 0, lineItem: buy, disposition: .unchanged)])
    }

    @Test("ids are unique in a submission and per app")
    func uniqueIds() throws {
        let buy = try Self.item(S.oneTimeBuy)
        var again = buy
        again.quantity = 1
        let inRequest = Self.check([buy, again])
        #expect(
            inRequest.problems.map(\.description) == [
                "lineItems[1].lineItemId: repeats lineItems[0].lineItemId: each line of a submission needs its own id"
            ])
        #expect(inRequest.accepted.map(\.index) == [0])
        let otherToken = Self.check([buy], stored: [Self.stored(buy, token: "token-b")])
        #expect(
            otherToken.problems.map(\.description) == [
                "lineItems[0].lineItemId: is already used by a line of another token: lineItemId must be unique per app"
            ])
        #expect(otherToken.accepted == [])
    }

    @Test("a restatement keeps the original creationDate and kind, within 365 days; the checkout's flag is optional")
    func restatement() throws {
        let original = try Self.item(S.oneTimeBuy)
        let restated = try Self.item(S.edit(S.oneTimeBuy, set: ["netAmountTaxExclusive": "700", "restatement": "true"]))
        let good = Self.check([restated], stored: [Self.stored(original)])
        #expect(good.problems == [])
        #expect(good.accepted.map(\.disposition) == [.restatement])

        // A changed line is a restatement with or without the flag, and is stored flagged.
        let unflagged = try Self.item(S.edit(S.oneTimeBuy, set: ["netAmountTaxExclusive": "700"]))
        let changed = Self.check([unflagged], stored: [Self.stored(original)])
        #expect(changed.problems == [])
        #expect(changed.accepted.map(\.disposition) == [.restatement])
        #expect(changed.accepted.first?.lineItem.restatement == true)
        // The flag alone changes nothing: the stored line, unchanged.
        let flaggedOnly = try Self.item(S.edit(S.oneTimeBuy, set: ["restatement": "true"]))
        let same = Self.check([flaggedOnly], stored: [Self.stored(original)])
        #expect(same.accepted.map(\.disposition) == [.unchanged])
        #expect(same.accepted.first?.lineItem == original)

        let moved = try Self.item(S.edit(S.oneTimeBuy, set: ["creationDate": "\(S.now - 2 * S.hour)", "restatement": "true"]))
        #expect(
            Self.check([moved], stored: [Self.stored(original)]).problems.map(\.description) == [
                "lineItems[0].creationDate: a restatement keeps the original creationDate \(S.now - S.hour), not \(S.now - 2 * S.hour)"
            ])

        var asSubscription = try Self.item(S.edit(S.subscriptionStart, set: ["lineItemId": "\"buy-1\"", "restatement": "true"]))
        asSubscription.creationDate = original.creationDate
        #expect(
            Self.check([asSubscription], stored: [Self.stored(original)]).problems.map(\.description) == [
                "lineItems[0].eventType: a restatement cannot change the line's kind from a one-time buy to a subscription"
            ])

        let late = Self.check([restated], stored: [Self.stored(original)], now: original.creationDate + 366 * S.day)
        #expect(
            late.problems.map(\.description) == [
                "lineItems[0].restatement: comes more than 365 days after the line's creationDate \(original.creationDate): too late to restate"
            ])
        #expect(Self.check([restated], stored: [Self.stored(original)], now: original.creationDate + 365 * S.day).problems == [])

        #expect(
            Self.check([restated]).problems.map(\.description) == [
                "lineItems[0].restatement: is true, but no stored line of this token has lineItemId \"buy-1\" to restate"
            ])
    }

    @Test("a withdrawal restates the line as erroneously submitted; refunds of it are refused")
    func withdrawal() throws {
        let original = try Self.item(S.oneTimeBuy)
        let withdrawn = try Self.item(S.edit(S.oneTimeBuy, set: ["restatement": "true", "erroneouslySubmitted": "true"]))
        #expect(withdrawn.isWithdrawal)
        let result = Self.check([withdrawn], stored: [Self.stored(original)])
        #expect(result.problems == [])
        #expect(result.accepted.map(\.disposition) == [.restatement])
        let refund = try Self.item(S.refund)
        #expect(
            Self.check([refund], stored: [Self.stored(withdrawn)]).problems.map(\.description) == [
                "lineItems[0].referenceLineItemId: names a withdrawn line: there is nothing to refund"
            ])
    }

    @Test("a refund names a buy of the same token, matches it, and refunds no more than it cost")
    func refunds() throws {
        let buy = try Self.item(S.oneTimeBuy)
        let refund = try Self.item(S.refund)
        #expect(Self.check([refund], stored: [Self.stored(buy)]).problems == [])
        #expect(
            Self.check([refund]).problems.map(\.description) == [
                "lineItems[0].referenceLineItemId: names no line of this token, in this submission or stored: \"buy-1\""
            ])
        #expect(
            Self.check([refund], stored: [Self.stored(buy, token: "token-b")]).problems.map(\.description) == [
                "lineItems[0].referenceLineItemId: names a line of another token: it must name a line of the same token"
            ])

        let refundOfRefund = try Self.item(S.edit(S.refund, set: ["lineItemId": "\"refund-2\"", "referenceLineItemId": "\"refund-1\""]))
        #expect(
            Self.check([refund, refundOfRefund], stored: [Self.stored(buy)]).problems.map(\.description) == [
                "lineItems[1].referenceLineItemId: names a refund: a refund cannot be refunded"
            ])

        let mismatched = try Self.item(
            S.edit(
                S.refund,
                set: [
                    "pricingCurrency": "\"SEK\"", "reportingCurrency": "\"SEK\"", "taxCountry": "\"SWE\"",
                ]))
        #expect(
            Self.check([mismatched], stored: [Self.stored(buy)]).problems.map(\.description) == [
                "lineItems[0].pricingCurrency: must match the refunded line \"buy-1\"'s pricingCurrency EUR",
                "lineItems[0].reportingCurrency: must match the refunded line \"buy-1\"'s reportingCurrency EUR",
                "lineItems[0].taxCountry: must match the refunded line \"buy-1\"'s taxCountry ESP",
            ])
        let iskBuy = try Self.item(S.edit(S.oneTimeBuy, set: ["pricingCurrency": "\"ISK\"", "exchangeRate": "0.0071"]))
        let iskRefund = try Self.item(S.edit(S.refund, set: ["pricingCurrency": "\"ISK\"", "exchangeRate": "0.0072"]))
        #expect(
            Self.check([iskRefund], stored: [Self.stored(iskBuy)]).problems.map(\.description) == [
                "lineItems[0].exchangeRate: must match the refunded line \"buy-1\"'s exchangeRate 0.0071"
            ])

        // 300 stored + 800 new > 1000 bought; a withdrawn refund does not count.
        let second = try Self.item(
            S.edit(
                S.refund,
                set: [
                    "lineItemId": "\"refund-2\"", "amountTaxExclusive": "800", "amountTaxInclusive": "960",
                    "netAmountTaxExclusive": "800", "taxAmount": "160",
                ]))
        #expect(
            Self.check([second], stored: [Self.stored(buy), Self.stored(refund)]).problems.map(\.description) == [
                "lineItems[0].amountTaxExclusive: refunds of \"buy-1\" would add up to 1100, more than its amountTaxExclusive 1000"
            ])
        let withdrawnRefund = try Self.item(S.edit(S.refund, set: ["restatement": "true", "erroneouslySubmitted": "true"]))
        #expect(Self.check([withdrawnRefund, second], stored: [Self.stored(buy), Self.stored(refund)]).problems == [])
    }

    @Test("a subscription's reference names its SUBSCRIPTION_START; paid days never go down")
    func subscriptionReferences() throws {
        let start = try Self.item(S.subscriptionStart)
        let renewal = try Self.item(S.renewal)
        let buy = try Self.item(S.oneTimeBuy)
        #expect(Self.check([renewal], stored: [Self.stored(start)]).problems == [])

        let namingBuy = try Self.item(S.edit(S.renewal, set: ["referenceLineItemId": "\"buy-1\""]))
        #expect(
            Self.check([namingBuy], stored: [Self.stored(buy)]).problems.map(\.description) == [
                "lineItems[0].referenceLineItemId: must name a subscription line, not a one-time buy"
            ])
        let namingRenewal = try Self.item(S.edit(S.renewal, set: ["lineItemId": "\"sub-3\"", "referenceLineItemId": "\"sub-2\""]))
        #expect(
            Self.check([namingRenewal], stored: [Self.stored(start), Self.stored(renewal)]).problems.map(\.description) == [
                "lineItems[0].referenceLineItemId: must name the subscription's SUBSCRIPTION_START line, not a RENEWAL line"
            ])

        let third = try Self.item(
            S.edit(
                S.renewal,
                set: [
                    "lineItemId": "\"sub-3\"", "subscriptionStartDate": "\(S.now - 2 * S.hour + 60 * S.day)",
                    "subscriptionEndDate": "\(S.now - 2 * S.hour + 90 * S.day)", "subscriptionDaysOfPaidService": "29",
                ]))
        #expect(
            Self.check([third], stored: [Self.stored(start), Self.stored(renewal)]).problems.map(\.description) == [
                "lineItems[0].subscriptionDaysOfPaidService: goes down from 30 (line \"sub-2\") to 29 (line \"sub-3\"): paid days are a running total"
            ])
    }

    @Test("BUY lines fall in the token's active window; refunds may come after a custom-link token expired")
    func tokenWindow() throws {
        let early = try Self.item(S.edit(S.oneTimeBuy, set: ["creationDate": "\(Self.tokenCreated - 300_001)"]))
        #expect(
            Self.check([early]).problems.map(\.description) == [
                "lineItems[0].creationDate: \(Self.tokenCreated - 300_001) is before the token was created (tokenCreationDate \(Self.tokenCreated), less 5 minutes)"
            ])
        let edge = try Self.item(S.edit(S.oneTimeBuy, set: ["creationDate": "\(Self.tokenCreated - 300_000)"]))
        #expect(Self.check([edge]).problems == [])

        let buy = try Self.item(S.oneTimeBuy)
        let expiration = buy.creationDate - 1
        #expect(
            Self.check([buy], expiration: expiration).problems.map(\.description) == [
                "lineItems[0].creationDate: \(buy.creationDate) is after the token expired (tokenExpirationDate \(expiration))"
            ])
        let refund = try Self.item(S.refund)
        #expect(Self.check([refund], stored: [Self.stored(edge)], expiration: expiration).problems == [])
    }
}
