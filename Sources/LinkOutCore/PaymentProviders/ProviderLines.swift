/// Apple's line items from a provider's sale or refund, once the event's token is known: the product, the
/// tax country, a subscription's paid days and the line a refund undoes are filled in here, from what the
/// store holds. Pure; the lines then go through exactly the checks of `POST /v1/line-items`
/// (`LineItemRules`, `LineItemHistoryRules`), so a provider cannot report what a checkout could not.
public enum ProviderLines {
    public enum Outcome: Sendable, Equatable {
        case line(LineItem)
        /// The line cannot be made yet, for a reason an operator can fix (a product to configure); tried again.
        case wait(String)
        /// The line must not be made without a person: kept for review, never sent.
        case hold(String)
    }

    static let dayMs: Int64 = 86_400_000

    /// A sale's line. `country`: alpha-2, the sale's own or its address's. `start`: the subscription's
    /// SUBSCRIPTION_START line, for every later line of it.
    public static func sale(
        _ sale: ProviderSale, country: String?, defaultProductIdentifier: String?, start: LineItem?
    ) -> Outcome {
        guard let product = sale.productIdentifier ?? defaultProductIdentifier else {
            return .wait(
                "no productIdentifier: set metadata.productIdentifier on the checkout (custom_data.productIdentifier at Paddle) or the provider's defaultProductIdentifier"
            )
        }
        guard CurrencyCodes.appleReporting.contains(sale.currency) else {
            return .hold(
                "\(sale.currency) is not one of Apple's reporting currencies, and the event carries no exchange rate to EUR or USD")
        }
        guard let country else { return .hold("the sale names no country: Apple needs the tax country") }
        guard let taxCountry = CountryCodes.alpha3ByAlpha2[country.uppercased()] else {
            return .hold("country \(JSONText.quote(country)) is not an ISO 3166-1 alpha-2 code")
        }
        guard sale.taxAmount <= sale.amountTaxInclusive else {
            return .hold("the tax \(sale.taxAmount) is more than the total \(sale.amountTaxInclusive)")
        }
        let exclusive = sale.amountTaxInclusive - sale.taxAmount
        var line = LineItem(
            lineItemId: sale.lineItemId, kind: sale.subscription == nil ? .oneTimeBuy : .subscription, creationDate: sale.creationDate,
            productIdentifier: product, quantity: sale.quantity, pricingCurrency: sale.currency, reportingCurrency: sale.currency,
            amountTaxExclusive: exclusive, amountTaxInclusive: sale.amountTaxInclusive, netAmountTaxExclusive: exclusive,
            taxAmount: sale.taxAmount, taxCountry: taxCountry)
        if let subscription = sale.subscription {
            line.subscriptionEvent = subscription.event
            line.subscriptionStartDate = subscription.start
            line.subscriptionEndDate = subscription.end
            if subscription.event == .subscriptionStart {
                line.subscriptionDaysOfPaidService = 0
            } else {
                guard let start else { return .wait("the subscription's SUBSCRIPTION_START line is not known yet") }
                line.referenceLineItemId = start.lineItemId
                line.subscriptionDaysOfPaidService = paidDays(before: subscription.start, start: start)
            }
        }
        return .line(line)
    }

    /// Paid days before a period starting at `periodStart`: whole days since the subscription's paid
    /// service began, which is its start, or the end of its first period when that was free (a trial).
    /// Counted from the dates rather than added up line by line, so renewals arriving out of order, or one
    /// missing, still get their own right total.
    static func paidDays(before periodStart: Int64, start: LineItem) -> Int64 {
        let paidFrom =
            start.amountTaxInclusive == 0 ? (start.subscriptionEndDate ?? periodStart) : (start.subscriptionStartDate ?? periodStart)
        return max(0, (periodStart - paidFrom) / dayMs)
    }

    /// A refund's line, of the line `bought`. The currencies, rate and tax country are the bought line's
    /// (Apple requires them equal). Without the provider's tax split, the tax is the bought line's share:
    /// refunded × tax ÷ total, rounded half away from zero to the currency's smallest unit; a full refund
    /// is exactly the bought line's amounts.
    public static func refund(_ refund: ProviderRefund, of bought: LineItem) -> Outcome {
        guard refund.currency == bought.pricingCurrency else {
            return .hold("the refund is in \(refund.currency), the line it refunds (\(bought.lineItemId)) in \(bought.pricingCurrency)")
        }
        guard refund.amountTaxInclusive <= bought.amountTaxInclusive else {
            return .hold(
                "the refund of \(refund.amountTaxInclusive) is more than its line \(bought.lineItemId) cost (\(bought.amountTaxInclusive))")
        }
        let tax: Int64
        if let given = refund.taxAmount {
            tax = given
        } else if refund.amountTaxInclusive == bought.amountTaxInclusive {
            tax = bought.taxAmount
        } else if bought.amountTaxInclusive == 0 {
            tax = 0
        } else {
            let step = CurrencyCodes.milliUnitsPerMinorUnit(bought.reportingCurrency)
            let exact = Double(refund.amountTaxInclusive) * Double(bought.taxAmount) / Double(bought.amountTaxInclusive)
            tax = Int64((exact / Double(step)).rounded(.toNearestOrAwayFromZero)) * step
        }
        guard tax <= refund.amountTaxInclusive else {
            return .hold("the refund's tax \(tax) is more than the refund \(refund.amountTaxInclusive)")
        }
        let exclusive = refund.amountTaxInclusive - tax
        return .line(
            LineItem(
                lineItemId: refund.lineItemId, kind: .refund, referenceLineItemId: bought.lineItemId, creationDate: refund.creationDate,
                pricingCurrency: bought.pricingCurrency, reportingCurrency: bought.reportingCurrency, exchangeRate: bought.exchangeRate,
                amountTaxExclusive: exclusive, amountTaxInclusive: refund.amountTaxInclusive, netAmountTaxExclusive: exclusive,
                taxAmount: tax, taxCountry: bought.taxCountry))
    }

    /// Why a payment of this environment must not be reported on this token, or nil when they pair: a
    /// test-mode (Stripe `livemode: false`) or sandbox (Paddle's sandbox secret) payment goes with `SANDBOX`
    /// tokens, a live one with production tokens. A test payment must never reach Apple's production, and a
    /// live payment on a sandbox token (a tester paying for real) needs a person.
    public static func environmentMismatch(live: Bool, externalPurchaseId: String) -> String? {
        let environment = TokenEnvironment(externalPurchaseId: externalPurchaseId)
        switch (live, environment) {
        case (true, .production), (false, .sandbox): return nil
        case (false, .production): return "a test-mode payment for a production token: held, never sent to Apple"
        case (true, .sandbox): return "a live payment for a SANDBOX token: held for review (a tester paid for real?)"
        }
    }
}
