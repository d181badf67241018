/// The rules one line item must keep on its own, whatever else the token holds. Each message names the rule.
public enum LineItemRules {
    /// The earliest Unix time in milliseconds taken as a date (2001-09-09): anything below it is almost
    /// certainly seconds, which Apple refuses.
    public static let earliestMillis: Int64 = 1_000_000_000_000
    /// How far a `creationDate` may run ahead of `now`: clocks of the checkout and of linkout differ.
    public static let futureAllowanceMillis: Int64 = 5 * 60 * 1000

    /// Which fields each kind requires or refuses (a refund's `referenceLineItemId`, a refund's `quantity`)
    /// is the reader's job, when the JSON is read; these are the rules on the values.
    ///
    /// Every broken rule of `item`, with fields under `field` (such as `lineItems[2]`); `now` in Unix ms.
    public static func check(_ item: LineItem, field prefix: String = "", now: Int64) -> [LineItemProblem] {
        var problems: [LineItemProblem] = []
        func problem(_ name: String, _ message: String) {
            problems.append(LineItemProblem(field: LineItemProblem.path(prefix, name), message: message))
        }
        func length(_ name: String, _ text: String?, max: Int) {
            guard let text else { return }
            if !(1...max).contains(text.count) { problem(name, "must be 1 to \(max) characters, not \(text.count)") }
        }
        func date(_ name: String, _ value: Int64?) {
            guard let value, value < earliestMillis else { return }
            problem(name, "\(value) looks like Unix seconds: dates are Unix milliseconds (at least \(earliestMillis))")
        }
        // An amount in a currency that was not converted is charged in whole minor units (cents, yen):
        // one that is not a whole number of them is almost surely in minor units, not milli-units, which
        // would report a tenth (or a thousandth) of the sale to Apple.
        let unconverted =
            item.exchangeRate == nil && item.reportingCurrency == item.pricingCurrency
            && CurrencyCodes.appleReporting.contains(item.reportingCurrency)
        func amount(_ name: String, _ value: Int64) {
            if value < 0 {
                problem(name, "must be 0 or more milli-units, not \(value)")
            } else if unconverted, let message = minorUnitProblem(value, currency: item.reportingCurrency) {
                problem(name, message)
            }
        }

        length("lineItemId", item.lineItemId, max: 128)
        length("referenceLineItemId", item.referenceLineItemId, max: 128)
        length("productIdentifier", item.productIdentifier, max: 256)
        if let quantity = item.quantity, quantity < 1 { problem("quantity", "must be 1 or more, not \(quantity)") }

        date("creationDate", item.creationDate)
        if item.creationDate > now.addingReportingOverflow(futureAllowanceMillis).partialValue {
            problem("creationDate", "is more than 5 minutes in the future (\(item.creationDate) > now \(now))")
        }

        amount("amountTaxExclusive", item.amountTaxExclusive)
        amount("amountTaxInclusive", item.amountTaxInclusive)
        amount("netAmountTaxExclusive", item.netAmountTaxExclusive)
        amount("taxAmount", item.taxAmount)
        let (sum, overflow) = item.amountTaxExclusive.addingReportingOverflow(item.taxAmount)
        if overflow || item.amountTaxInclusive != sum {
            problem(
                "amountTaxInclusive",
                "must equal amountTaxExclusive + taxAmount (\(item.amountTaxExclusive) + \(item.taxAmount)), not \(item.amountTaxInclusive)"
            )
        }
        if item.netAmountTaxExclusive > item.amountTaxExclusive {
            problem(
                "netAmountTaxExclusive",
                "must not exceed amountTaxExclusive (\(item.amountTaxExclusive)), not \(item.netAmountTaxExclusive)")
        }

        checkCurrencies(item, problem)
        checkTaxCountry(item.taxCountry, problem)

        if item.kind == .subscription {
            if let start = item.subscriptionStartDate, let end = item.subscriptionEndDate, start > end {
                problem("subscriptionEndDate", "must not be before subscriptionStartDate (\(end) < \(start))")
            }
            date("subscriptionStartDate", item.subscriptionStartDate)
            date("subscriptionEndDate", item.subscriptionEndDate)
            if let days = item.subscriptionDaysOfPaidService {
                if days < 0 {
                    problem("subscriptionDaysOfPaidService", "must be 0 or more, not \(days)")
                } else if item.subscriptionEvent == .subscriptionStart && days != 0 {
                    problem(
                        "subscriptionDaysOfPaidService",
                        "must be 0 on SUBSCRIPTION_START, not \(days): it counts paid days before this line")
                }
            }
        }
        if item.erroneouslySubmitted == true && item.restatement != true {
            problem("erroneouslySubmitted", "true requires restatement: true (a withdrawal restates the line)")
        }
        return problems
    }

    /// Why `value` (milli-units of `currency`) is not a whole number of the currency's minor units, worded
    /// as the mistake it most likely is, with the amount it was meant to be; nil when it is whole.
    static func minorUnitProblem(_ value: Int64, currency: String) -> String? {
        let step = CurrencyCodes.milliUnitsPerMinorUnit(currency)
        guard value % step != 0 else { return nil }
        let meant = value.multipliedReportingOverflow(by: step)
        let amounts = "amounts are milli-units, thousandths of a \(currency)"
        guard !meant.overflow else { return "is not a whole number of \(currency)'s smallest unit (\(amounts))" }
        // Only 0 and 2 digits get here: a 3-digit currency's minor unit is one milli-unit.
        if CurrencyCodes.minorUnitDigits(currency) == 0 {
            return
                "\(value) looks like whole \(currency): \(value) \(currency) is \(meant.partialValue) (\(amounts); \(currency) has no minor unit)"
        }
        let cents = value % 100
        return
            "\(value) looks like cents: \(value / 100).\(cents < 10 ? "0" : "")\(cents) \(currency) is \(meant.partialValue) (\(amounts))"
    }

    private static func checkCurrencies(_ item: LineItem, _ problem: (String, String) -> Void) {
        let pricing = item.pricingCurrency
        let reporting = item.reportingCurrency
        let pricingKnown = CurrencyCodes.iso4217Active.contains(pricing)
        if !pricingKnown {
            problem("pricingCurrency", "must be an active ISO 4217 code in capitals, such as EUR, not \(JSONText.quote(pricing))")
        }
        if !CurrencyCodes.appleReporting.contains(reporting) {
            problem(
                "reportingCurrency", "must be one of Apple's reporting currencies, such as EUR or USD, not \(JSONText.quote(reporting))")
        }
        if let rate = item.exchangeRate, !(rate > 0) {
            problem("exchangeRate", "must be greater than 0, not \(rate)")
        }
        guard pricingKnown else { return }
        if CurrencyCodes.appleReporting.contains(pricing) {
            if reporting != pricing {
                problem("reportingCurrency", "must equal pricingCurrency \(pricing): Apple takes reports in \(pricing), so no conversion")
            }
            if item.exchangeRate != nil {
                problem("exchangeRate", "is only allowed when reportingCurrency differs from pricingCurrency")
            }
        } else {
            if reporting != "EUR" && reporting != "USD" {
                problem("reportingCurrency", "must be EUR or USD: Apple does not take reports in \(pricing)")
            }
            if item.exchangeRate == nil {
                problem("exchangeRate", "is required when reportingCurrency differs from pricingCurrency (pricing × rate = reporting)")
            }
        }
    }

    private static func checkTaxCountry(_ code: String, _ problem: (String, String) -> Void) {
        guard !CountryCodes.iso3166Alpha3.contains(code) else { return }
        if let alpha3 = CountryCodes.alpha3ByAlpha2[code.uppercased()] {
            problem("taxCountry", "must be an ISO 3166-1 alpha-3 code: \(JSONText.quote(code)) looks like alpha-2, use \(alpha3)")
        } else if let alpha3 = CountryCodes.iso3166Alpha3.first(where: { $0 == code.uppercased() }) {
            problem("taxCountry", "must be in capitals: use \(alpha3)")
        } else {
            problem("taxCountry", "must be an assigned ISO 3166-1 alpha-3 code, such as ESP or NLD, not \(JSONText.quote(code))")
        }
    }
}
