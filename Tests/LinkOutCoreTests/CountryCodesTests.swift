import Testing

@testable import LinkOutCore

@Suite("CountryCodes")
struct CountryCodesTests {
    /// ISO 3166-1 alpha-2, officially assigned codes, typed out independently of the source.
    static let reference = """
        AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ
        CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR
        GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP
        KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS
        MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS
        RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ
        UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { $0.lowercased() }

    @Test("exactly the 249 ISO 3166-1 alpha-2 codes")
    func iso() {
        #expect(Self.reference.count == 249)
        #expect(Set(Self.reference).count == 249)
        #expect(CountryCodes.iso3166Alpha2.count == 249)
        #expect(CountryCodes.iso3166Alpha2 == Set(Self.reference))
    }

    @Test("codes are two lowercase ASCII letters")
    func shape() {
        for code in CountryCodes.iso3166Alpha2 {
            #expect(code.utf8.count == 2 && code.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }, "\(code)")
        }
    }

    @Test(
        "reserved and retired codes are not in the list",
        arguments: ["uk", "eu", "xk", "an", "yu", "cs", "su", "tp", "zr", "ac", "ea", "ic", "ta", "un", "aa", "zz"])
    func notISO(_ code: String) {
        #expect(!CountryCodes.iso3166Alpha2.contains(code))
    }

    @Test("Apple's external-purchase storefronts are the EU27 plus is, no, ru, all ISO codes")
    func storefronts() {
        let eu27: Set<String> = [
            "at", "be", "bg", "hr", "cy", "cz", "dk", "ee", "fi", "fr", "de", "gr", "hu", "ie", "it",
            "lv", "lt", "lu", "mt", "nl", "pl", "pt", "ro", "sk", "si", "es", "se",
        ]
        #expect(eu27.count == 27)
        #expect(CountryCodes.externalPurchaseStorefronts == eu27.union(["is", "no", "ru"]))
        #expect(CountryCodes.externalPurchaseStorefronts.isSubset(of: CountryCodes.iso3166Alpha2))
        #expect(!CountryCodes.externalPurchaseStorefronts.contains("us"))
    }
}
