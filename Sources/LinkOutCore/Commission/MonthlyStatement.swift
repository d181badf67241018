/// What is owed to Apple for one month (UTC), by app, region and currency: the tokens created, the sales
/// dated in the month inside and outside the window after each token's tap, and the commission, with every
/// line item it was computed from. Pure: the store hands it the month's tokens and lines.
///
/// The rules, each in one place here:
/// - **Sandbox** tokens (`SANDBOX…` ids: TestFlight, Xcode, `mint-token`'s default) and their line items
///   are left out, counted in `sandboxTokens`: a test purchase owes Apple nothing.
/// - A token's **region** is its storefront's (`CommissionSettings.region(of:)`): its first shopper's link
///   country, else the registered `country`, else its first visit's; none is region `nil`.
/// - The **tap** is the token's `tokenCreationDate`. A sale is **in the window** when its `creationDate` is
///   at most `windowDays` × 24 h after the tap (to the millisecond); a refund is in or out as the line it
///   refunds is. A region's terms apply to taps on or after its `from`; before, the rate is 0.
/// - **Sales** are line items dated in the month, their latest revision, withdrawn ones left out:
///   `amountTaxExclusive` added for a purchase (one-time or subscription), taken off for a refund, in the
///   line's `reportingCurrency`, never converted. A refund dated next month counts next month.
/// - **Commission** of a line: `amountTaxExclusive` × the app's tier's rate (the reduced rate for a
///   subscription's line past the region's `subscriptionReducedAfterPaidDays`, a refund as the line it
///   refunds), in the window only, rounded
///   half away from zero to the currency's smallest unit (cents; whole yen), per line. A row's commission
///   is the sum of its lines', so the lines re-add to the totals exactly.
public struct MonthlyStatement: Sendable, Equatable {
    public var month: UTCMonth
    public var rows: [Row]
    public var lines: [Line]
    /// Sandbox tokens created in the month, left out of the rows with their line items (said beside them).
    public var sandboxTokens: Int64 = 0

    public struct Row: Sendable, Equatable {
        public var bundleId: String
        /// The region's name; nil for storefronts in no configured region.
        public var region: String?
        /// nil for a region whose tokens had no sale in the month.
        public var currency: String?
        /// Tokens created in the month, and those of them a shopper visited: the region's, the same on each
        /// of its currency rows.
        public var tokens: Int64
        public var tokensVisited: Int64
        /// Tokens with a purchase dated in the month, in this currency.
        public var tokensPurchased: Int64
        /// Milli-units of `currency`, tax exclusive, net of refunds.
        public var salesInWindow: Int64
        public var salesOutsideWindow: Int64
        public var commission: Int64
        /// Shoppers' taps on links that expect no token (`links[].token: "none"`), whose fee Apple may set
        /// later: on the rows of no app (`bundleId` ""), since such a link names none.
        public var taps: Int64 = 0
    }

    /// Shoppers' taps of the month on links that expect no token, counted by the link's country.
    public struct TapCount: Sendable, Equatable {
        public var country: String
        public var count: Int64

        public init(country: String, count: Int64) {
            self.country = country
            self.count = count
        }
    }

    /// One line item of the month, as it counted.
    public struct Line: Sendable, Equatable {
        public var bundleId: String
        public var region: String?
        public var externalPurchaseId: String
        public var lineItemId: String
        /// `BUY` or `REFUND`.
        public var eventType: String
        public var tapAt: Int64
        public var createdAt: Int64
        public var inWindow: Bool
        public var currency: String
        /// Signed: a refund is negative.
        public var amount: Int64
        /// Parts per million; 0 outside the window or before the region's terms.
        public var ratePPM: Int64
        public var commission: Int64
    }

    /// Tokens created in the month, counted by the store per app, storefront and whether a shopper came.
    public struct TokenCount: Sendable, Equatable {
        public var bundleId: String
        public var country: String?
        public var visited: Bool
        public var count: Int64
        public var environment: TokenEnvironment

        public init(bundleId: String, country: String?, visited: Bool, count: Int64, environment: TokenEnvironment = .production) {
            self.bundleId = bundleId
            self.country = country
            self.visited = visited
            self.count = count
            self.environment = environment
        }
    }

    /// A line item dated in the month, with its token's tap and storefront, as stored now.
    public struct SoldLine: Sendable, Equatable {
        public var bundleId: String
        public var externalPurchaseId: String
        public var tapAt: Int64
        public var country: String?
        public var item: LineItem
        /// For a refund, the `creationDate` of the line it refunds, when stored.
        public var refundedCreatedAt: Int64?
        /// For a refund of a subscription's line, that line's `subscriptionDaysOfPaidService`.
        public var refundedPaidDays: Int64?
        /// The token's.
        public var environment: TokenEnvironment

        public init(
            bundleId: String, externalPurchaseId: String, tapAt: Int64, country: String?, item: LineItem, refundedCreatedAt: Int64?,
            refundedPaidDays: Int64? = nil, environment: TokenEnvironment = .production
        ) {
            self.bundleId = bundleId
            self.externalPurchaseId = externalPurchaseId
            self.tapAt = tapAt
            self.country = country
            self.item = item
            self.refundedCreatedAt = refundedCreatedAt
            self.refundedPaidDays = refundedPaidDays
            self.environment = environment
        }
    }

    public static func make(
        month: UTCMonth, tokens: [TokenCount], lines sold: [SoldLine], taps: [TapCount] = [], commission: CommissionSettings, apps: [AllowedApp]
    ) -> MonthlyStatement {
        let tiers = Dictionary(apps.map { ($0.bundleId, $0.commissionTier) }, uniquingKeysWith: { first, _ in first })
        struct RegionKey: Hashable { var bundleId: String; var region: String? }
        var tokenCounts: [RegionKey: (tokens: Int64, visited: Int64)] = [:]
        var sandboxTokens: Int64 = 0
        for count in tokens {
            guard count.environment == .production else {
                sandboxTokens += count.count
                continue
            }
            let key = RegionKey(bundleId: count.bundleId, region: count.country.flatMap { commission.region(of: $0)?.name })
            tokenCounts[key, default: (0, 0)].tokens += count.count
            if count.visited { tokenCounts[key, default: (0, 0)].visited += count.count }
        }

        var lines: [Line] = []
        for sold in sold where sold.environment == .production && sold.item.erroneouslySubmitted != true && month.contains(sold.item.creationDate) {
            let region = sold.country.flatMap { commission.region(of: $0) }
            let refund = sold.item.kind == .refund
            // A refund is in the window its sale was in.
            let dated = refund ? (sold.refundedCreatedAt ?? sold.item.creationDate) : sold.item.creationDate
            let inWindow = region.map { dated - sold.tapAt <= $0.windowMs } ?? false
            let termsApply = region.map { sold.tapAt >= $0.from } ?? false
            let paidDays = refund ? sold.refundedPaidDays : sold.item.subscriptionDaysOfPaidService
            let rate = inWindow && termsApply ? region!.ratePPM(tiers[sold.bundleId] ?? .standard, subscriptionPaidDays: paidDays) : 0
            let amount = refund ? -sold.item.amountTaxExclusive : sold.item.amountTaxExclusive
            lines.append(Line(
                bundleId: sold.bundleId, region: region?.name, externalPurchaseId: sold.externalPurchaseId,
                lineItemId: sold.item.lineItemId, eventType: refund ? "REFUND" : "BUY", tapAt: sold.tapAt,
                createdAt: sold.item.creationDate, inWindow: inWindow, currency: sold.item.reportingCurrency, amount: amount,
                ratePPM: rate, commission: commissionOf(amount, ratePPM: rate, currency: sold.item.reportingCurrency)))
        }
        lines.sort { ($0.bundleId, $0.region ?? "", $0.currency, $0.createdAt, $0.lineItemId) < ($1.bundleId, $1.region ?? "", $1.currency, $1.createdAt, $1.lineItemId) }

        struct RowKey: Hashable { var bundleId: String; var region: String?; var currency: String }
        var sums: [RowKey: (inWindow: Int64, outside: Int64, commission: Int64, purchasers: Set<String>)] = [:]
        for line in lines {
            let key = RowKey(bundleId: line.bundleId, region: line.region, currency: line.currency)
            var sum = sums[key] ?? (0, 0, 0, [])
            if line.inWindow { sum.inWindow += line.amount } else { sum.outside += line.amount }
            sum.commission += line.commission
            if line.eventType == "BUY" { sum.purchasers.insert(line.externalPurchaseId) }
            sums[key] = sum
        }
        var rows: [Row] = []
        let regions = Set(tokenCounts.keys).union(sums.keys.map { RegionKey(bundleId: $0.bundleId, region: $0.region) })
        for region in regions {
            let counted = tokenCounts[region] ?? (0, 0)
            let currencies = sums.keys.filter { $0.bundleId == region.bundleId && $0.region == region.region }.map(\.currency).sorted()
            if currencies.isEmpty {
                rows.append(Row(
                    bundleId: region.bundleId, region: region.region, currency: nil, tokens: counted.tokens, tokensVisited: counted.visited,
                    tokensPurchased: 0, salesInWindow: 0, salesOutsideWindow: 0, commission: 0))
            }
            for currency in currencies {
                let sum = sums[RowKey(bundleId: region.bundleId, region: region.region, currency: currency)]!
                rows.append(Row(
                    bundleId: region.bundleId, region: region.region, currency: currency, tokens: counted.tokens,
                    tokensVisited: counted.visited, tokensPurchased: Int64(sum.purchasers.count), salesInWindow: sum.inWindow,
                    salesOutsideWindow: sum.outside, commission: sum.commission))
            }
        }
        var tapsByRegion: [String?: Int64] = [:]
        for tap in taps { tapsByRegion[commission.region(of: tap.country)?.name, default: 0] += tap.count }
        for (region, count) in tapsByRegion {
            rows.append(Row(
                bundleId: "", region: region, currency: nil, tokens: 0, tokensVisited: 0, tokensPurchased: 0, salesInWindow: 0,
                salesOutsideWindow: 0, commission: 0, taps: count))
        }
        rows.sort { ($0.bundleId, $0.region ?? "\u{10FFFF}", $0.currency ?? "") < ($1.bundleId, $1.region ?? "\u{10FFFF}", $1.currency ?? "") }
        return MonthlyStatement(month: month, rows: rows, lines: lines, sandboxTokens: sandboxTokens)
    }

    /// `amount` × `ratePPM` / 1,000,000, rounded half away from zero to the currency's smallest unit, in
    /// integers throughout (no floating point between a sale and what is owed on it).
    public static func commissionOf(_ amount: Int64, ratePPM: Int64, currency: String) -> Int64 {
        // 128 bits: milli-units × parts per million outgrow 64 bits above some 9 million units of a currency.
        let product = Int128(amount) * Int128(ratePPM)
        let step = Int128(1_000_000) * Int128(CurrencyCodes.milliUnitsPerMinorUnit(currency))
        let magnitude = product < 0 ? -product : product
        let rounded = (magnitude + step / 2) / step * (step / 1_000_000)
        return Int64(product < 0 ? -rounded : rounded)
    }
}

extension UTCMonth {
    public func contains(_ milliseconds: Int64) -> Bool { (start..<end).contains(milliseconds) }
}
