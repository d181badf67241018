/// The currency codes a line item may name.
public enum CurrencyCodes {
    /// ISO 4217 codes in use for money a customer can pay with (list one, 2026): national currencies and
    /// the regional ones (XAF, XCD, XCG, XOF, XPF). Left out on purpose: withdrawn codes (HRK, CUC, SLL,
    /// ZWL, ANG), fund codes (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW), precious metals, bond units, SDR,
    /// XSU, XUA and the test and no-currency codes (XTS, XXX): none of them is a price.
    public static let iso4217Active: Set<String> = Set(
        """
        AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF \
        CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD \
        HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD \
        LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK \
        PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS \
        TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF XPF YER ZAR ZMW ZWG
        """.split(separator: " ").map(String.init))

    /// The currencies Apple accepts as a report's `reportingCurrency` (External Purchase Server API 1.2.0).
    /// A price in one of them is reported in it; a price in any other is reported in EUR or USD.
    public static let appleReporting: Set<String> = Set(
        """
        CLP EUR QAR COP VND EGP THB HKD NOK BRL GBP AUD SEK INR BGN ZAR KZT NGN TWD MXN CHF PEN DKK AED ILS KRW \
        PHP TZS PKR HUF IDR CNY MYR RUB RON SGD TRY CZK SAR USD NZD PLN JPY CAD
        """.split(separator: " ").map(String.init))
}

extension CurrencyCodes {
    /// ISO 4217's minor unit of an active code: the digits after the decimal point of its smallest amount
    /// (2 for EUR's cents, 0 for JPY, 3 for KWD's fils). Most currencies have 2; only the others are
    /// listed. MGA and MRU, whose minor unit is a fifth, are 2 in ISO 4217's table and here.
    public static func minorUnitDigits(_ code: String) -> Int {
        if zeroDecimal.contains(code) { return 0 }
        if threeDecimal.contains(code) { return 3 }
        return 2
    }

    static let zeroDecimal: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF", "XPF",
    ]
    static let threeDecimal: Set<String> = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"]

    /// Milli-units in one of the currency's smallest amounts: 10 for a cent, 1,000 for a yen, 1 for a fils.
    /// An amount of a currency that was not converted is a whole number of these: a price is charged in
    /// cents, never in tenths of one.
    public static func milliUnitsPerMinorUnit(_ code: String) -> Int64 {
        switch minorUnitDigits(code) {
        case 0: 1_000
        case 2: 10
        default: 1
        }
    }
}
