/// Amounts as the providers send them (integers in the currency's smallest unit *as the provider counts
/// it*) turned into Apple's milli-units: milli = minor × 10^(3 − e), with the provider's exponent e, which is
/// not always ISO 4217's.
public enum ProviderCurrency {
    /// Stripe's zero-decimal currencies (docs.stripe.com/currencies): ¥500 is `500`.
    static let stripeZeroDecimal: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF", "XPF",
    ]
    /// Stripe's three-decimal currencies: 1.230 KWD is `1230` (the last digit always 0).
    static let stripeThreeDecimal: Set<String> = ["BHD", "JOD", "KWD", "OMR", "TND"]
    /// Paddle's zero-decimal currencies (its starter kit's `parse-money.ts`; the Currencies API's
    /// `decimal_places` is the authority); every other currency Paddle takes has 2.
    static let paddleZeroDecimal: Set<String> = ["JPY", "KRW"]

    /// The provider's exponent for `currency` (upper case): ISK, HUF and TWD are 2 at Stripe, although ISO
    /// gives ISK 0 (Stripe charges ISK in multiples of 100).
    public static func exponent(_ currency: String, provider: PaymentProvider) -> Int {
        switch provider {
        case .stripe:
            if stripeZeroDecimal.contains(currency) { return 0 }
            if stripeThreeDecimal.contains(currency) { return 3 }
            return 2
        case .paddle:
            return paddleZeroDecimal.contains(currency) ? 0 : 2
        }
    }

    /// `minor` smallest units of the provider's `currency` in milli-units; nil on overflow.
    public static func milli(_ minor: Int64, currency: String, provider: PaymentProvider) -> Int64? {
        let factor: Int64 =
            switch exponent(currency, provider: provider) {
            case 0: 1000
            case 3: 1
            default: 10
            }
        let (value, overflow) = minor.multipliedReportingOverflow(by: factor)
        return overflow ? nil : value
    }
}
