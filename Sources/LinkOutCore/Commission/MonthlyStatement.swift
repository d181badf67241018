/// What is owed to Apple for one month (UTC), by app, region, kind of sale and currency: the tokens
/// created, the sales dated in the month that the terms charge (inside the window after each token's tap
/// for a link-out, every one for an in-app payment provider) and those they do not, and the commission, with
/// every line item it was computed from. Pure: the store hands it the month's tokens and lines.
///
/// The rules, each in one place here:
/// - **Sandbox** tokens (`SANDBOX…` ids: TestFlight, Xcode, `mint-token`'s default) and their line items
///   are left out, counted in `sandboxTokens`: a test purchase owes Apple nothing.
/// - A token's **region** is its storefront's (`CommissionSettings.region(of:)`): its first shopper's link
///   country, else the registered `country`, else its first visit's; none is region `nil`.
/// - A token's **kind** is its `tokenType`'s (`SaleKind(tokenType:)`): a link-out's sales are charged by
///   the region's own terms, an in-app payment provider's by its `inApp` terms, if it has any (if not, such
///   sales are charged nothing, and `inAppWithoutTerms` names the region).
/// - The **tap** is the token's `tokenCreationDate`. A link-out's sale is **in the window** when its
///   `creationDate` is at most `windowDays` × 24 h after the tap (to the millisecond); an in-app sale is
///   always (charged on the transaction itself); a refund is in or out as the line it refunds is. A
///   region's terms apply to taps on or after their `from`; before, the rate is 0.
/// - **Sales** are line items dated in the month, their latest revision, withdrawn ones left out:
///   `amountTaxExclusive` added for a purchase (one-time or subscription), taken off for a refund, in the
///   line's `reportingCurrency`, never converted. A refund dated next month counts next month.
/// - **Commission** of a line: `amountTaxExclusive` × the app's tier's rate (the reduced rate for a
///   subscription's line past the terms' `subscriptionReducedAfterPaidDays`, a refund as the line it
///   refunds), in the window only, rounded
///   half away from zero to the currency's smallest unit (cents; whole yen), per line. A row's commission
///   is the sum of its lines', so the lines re-add to the totals exactly.
public struct MonthlyStatement: Sendable, Equatable {
    public var month: UTCMonth
    public var rows: [Row]
    public var lines: [Line]
    /// Sandbox tokens created in the month, left out of the rows with their line items (said beside them).
    public var sandboxTokens: Int64 = 0
    /// Regions with in-app sales this month but no `inApp` terms, so those sales were charged nothing: said
    /// beside the rows, since what is owed on them is unknown, not zero.
    public var inAppWithoutTerms: [String] = []

    public struct Row: Sendable, Equatable {
        public var bundleId: String
        /// The region's name; nil for storefronts in no configured region.
        public var region: String?
        /// Which of the region's terms the row's sales are charged under.
        public var kind: SaleKind
        /// nil for a region whose tokens had no sale in the month.
        public var currency: String?
        /// Tokens created in the month, and those of them a shopper visited: the region's of this kind, the
        /// same on each of its currency rows.
        public var tokens: Int64
        public var tokensVisited: Int64
        /// Tokens with a purchase dated in the month, in this currency.
        public var tokensPurchased: Int64
        /// Milli-units of `currency`, tax exclusive, net of refunds: those the terms charge (in the window
        /// after the tap; every one for in-app), and the others.
        public var salesInWindow: Int64
        public var salesOutsideWindow: Int64
        public var commission: Int64
        /// Taps (`Tap`) on links that expect no token (`links[].token: "none"`), whose fee Apple may set
        /// later: on the rows of the link's `app`, or of no app (`bundleId` "") for a link that names none.
        public var taps: Int64 = 0
    }

    /// Taps (`Tap`) of the month on links that expect no token, counted by link and the link's country.
    public struct TapCount: Sendable, Equatable {
        /// The link's `id`: its `app`, if it names one, owns the taps.
        public var link: String
        public var country: String
        public var count: Int64

        public init(link: String = "", country: String, count: Int64) {
            self.link = link
            self.country = country
            self.count = count
        }
    }

    /// One line item of the month, as it counted.
    public struct Line: Sendable, Equatable {
        public var bundleId: String
        public var region: String?
        /// Which of the region's terms the line was charged under, by its token's type.
        public var kind: SaleKind
        public var externalPurchaseId: String
        public var lineItemId: String
        /// `BUY` or `REFUND`.
        public var eventType: String
        public var tapAt: Int64
        public var createdAt: Int64
        /// Whether the terms charge it: in the window after the tap, or for in-app always (none: never).
        public var inWindow: Bool
        public var currency: String
        /// Signed: a refund is negative.
        public var amount: Int64
        /// Parts per million; 0 outside the window, before the terms' `from`, or with no terms of its kind.
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
        /// As stored: the kind of sale follows from it (`SaleKind(tokenType:)`).
        public var tokenType: String?

        public init(
            bundleId: String, country: String?, visited: Bool, count: Int64, environment: TokenEnvironment = .production,
            tokenType: String? = nil
        ) {
            self.bundleId = bundleId
            self.country = country
            self.visited = visited
            self.count = count
            self.environment = environment
            self.tokenType = tokenType
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
        /// The token's, as stored.
        public var tokenType: String?

        public init(
            bundleId: String, externalPurchaseId: String, tapAt: Int64, country: String?, item: LineItem, refundedCreatedAt: Int64?,
            refundedPaidDays: Int64? = nil, environment: TokenEnvironment = .production, tokenType: String? = nil
        ) {
            self.tokenType = tokenType
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

    /// `links`: the config's, whose `app` owns its taps. `app`: one app's statement, with only the taps of
    /// links that name it (the store has already kept only that app's tokens and lines).
    public static func make(
        month: UTCMonth, tokens: [TokenCount], lines sold: [SoldLine], taps: [TapCount] = [], commission: CommissionSettings,
        apps: [AllowedApp],
        links: [Link] = [], app: String? = nil
    ) -> MonthlyStatement {
        let tiers = Dictionary(apps.map { ($0.bundleId, $0.commissionTier) }, uniquingKeysWith: { first, _ in first })
        struct RegionKey: Hashable {
            var bundleId: String
            var region: String?
            var kind: SaleKind
        }
        var tokenCounts: [RegionKey: (tokens: Int64, visited: Int64)] = [:]
        var sandboxTokens: Int64 = 0
        for count in tokens {
            guard count.environment == .production else {
                sandboxTokens += count.count
                continue
            }
            let key = RegionKey(
                bundleId: count.bundleId, region: count.country.flatMap { commission.region(of: $0)?.name },
                kind: SaleKind(tokenType: count.tokenType))
            tokenCounts[key, default: (0, 0)].tokens += count.count
            if count.visited { tokenCounts[key, default: (0, 0)].visited += count.count }
        }

        var lines: [Line] = []
        var inAppWithoutTerms: Set<String> = []
        for sold in sold
        where sold.environment == .production && sold.item.erroneouslySubmitted != true && month.contains(sold.item.creationDate) {
            let region = sold.country.flatMap { commission.region(of: $0) }
            let kind = SaleKind(tokenType: sold.tokenType)
            let terms = region?.terms(kind)
            if let region, terms == nil { inAppWithoutTerms.insert(region.name) }
            let refund = sold.item.kind == .refund
            // A refund is in the window its sale was in.
            let dated = refund ? (sold.refundedCreatedAt ?? sold.item.creationDate) : sold.item.creationDate
            let inWindow = terms?.charges(saleAt: dated, tapAt: sold.tapAt) ?? false
            let paidDays = refund ? sold.refundedPaidDays : sold.item.subscriptionDaysOfPaidService
            var rate: Int64 = 0
            if let terms, inWindow, sold.tapAt >= terms.from {
                rate = terms.ratePPM(tiers[sold.bundleId] ?? .standard, subscriptionPaidDays: paidDays)
            }
            let amount = refund ? -sold.item.amountTaxExclusive : sold.item.amountTaxExclusive
            lines.append(
                Line(
                    bundleId: sold.bundleId, region: region?.name, kind: kind, externalPurchaseId: sold.externalPurchaseId,
                    lineItemId: sold.item.lineItemId, eventType: refund ? "REFUND" : "BUY", tapAt: sold.tapAt,
                    createdAt: sold.item.creationDate, inWindow: inWindow, currency: sold.item.reportingCurrency, amount: amount,
                    ratePPM: rate, commission: commissionOf(amount, ratePPM: rate, currency: sold.item.reportingCurrency)))
        }
        lines.sort {
            ($0.bundleId, $0.region ?? "", $0.kind.rawValue, $0.currency, $0.createdAt, $0.lineItemId)
                < ($1.bundleId, $1.region ?? "", $1.kind.rawValue, $1.currency, $1.createdAt, $1.lineItemId)
        }

        struct RowKey: Hashable {
            var region: RegionKey
            var currency: String
        }
        var sums: [RowKey: (inWindow: Int64, outside: Int64, commission: Int64, purchasers: Set<String>)] = [:]
        for line in lines {
            let key = RowKey(region: RegionKey(bundleId: line.bundleId, region: line.region, kind: line.kind), currency: line.currency)
            var sum = sums[key] ?? (0, 0, 0, [])
            if line.inWindow { sum.inWindow += line.amount } else { sum.outside += line.amount }
            sum.commission += line.commission
            if line.eventType == "BUY" { sum.purchasers.insert(line.externalPurchaseId) }
            sums[key] = sum
        }
        var rows: [Row] = []
        for region in Set(tokenCounts.keys).union(sums.keys.map(\.region)) {
            let counted = tokenCounts[region] ?? (0, 0)
            let currencies = sums.keys.filter { $0.region == region }.map(\.currency).sorted()
            if currencies.isEmpty {
                rows.append(
                    Row(
                        bundleId: region.bundleId, region: region.region, kind: region.kind, currency: nil, tokens: counted.tokens,
                        tokensVisited: counted.visited, tokensPurchased: 0, salesInWindow: 0, salesOutsideWindow: 0, commission: 0))
            }
            for currency in currencies {
                let sum = sums[RowKey(region: region, currency: currency)]!
                rows.append(
                    Row(
                        bundleId: region.bundleId, region: region.region, kind: region.kind, currency: currency, tokens: counted.tokens,
                        tokensVisited: counted.visited, tokensPurchased: Int64(sum.purchasers.count), salesInWindow: sum.inWindow,
                        salesOutsideWindow: sum.outside, commission: sum.commission))
            }
        }
        // A tap is a link-out's; the link's app, if it names one, owns it.
        let appOfLink = Dictionary(links.compactMap { link in link.app.map { (link.id, $0) } }, uniquingKeysWith: { first, _ in first })
        var tapsByRegion: [RegionKey: Int64] = [:]
        for tap in taps {
            let owner = appOfLink[tap.link] ?? ""
            if let app, owner != app { continue }
            tapsByRegion[RegionKey(bundleId: owner, region: commission.region(of: tap.country)?.name, kind: .linkOut), default: 0] +=
                tap.count
        }
        for (region, count) in tapsByRegion {
            // Beside the app's tokens of the region when it has a row with no sale; else a row of its own.
            if let index = rows.firstIndex(where: {
                ($0.bundleId, $0.region, $0.kind) == (region.bundleId, region.region, region.kind) && $0.currency == nil
            }) {
                rows[index].taps = count
                continue
            }
            rows.append(
                Row(
                    bundleId: region.bundleId, region: region.region, kind: region.kind, currency: nil, tokens: 0, tokensVisited: 0,
                    tokensPurchased: 0, salesInWindow: 0, salesOutsideWindow: 0, commission: 0, taps: count))
        }
        rows.sort {
            ($0.bundleId, $0.region ?? "\u{10FFFF}", $0.kind.rawValue, $0.currency ?? "")
                < ($1.bundleId, $1.region ?? "\u{10FFFF}", $1.kind.rawValue, $1.currency ?? "")
        }
        return MonthlyStatement(
            month: month, rows: rows, lines: lines, sandboxTokens: sandboxTokens, inAppWithoutTerms: inAppWithoutTerms.sorted())
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
