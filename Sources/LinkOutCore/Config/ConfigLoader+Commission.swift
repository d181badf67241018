extension ConfigLoader {
    /// `commission.regions`: each `{ name, countries, from, rate, reducedRate, windowDays,
    /// subscriptionReducedAfterPaidDays }` (a link-out's terms), and optionally `inApp: { rate, reducedRate,
    /// from, subscriptionReducedAfterPaidDays }` (an in-app payment provider's: no window, `from` the
    /// region's unless given).
    static func readCommission(_ root: inout ObjectReader, problems: inout [ConfigProblem]) -> CommissionSettings {
        guard var object = root.object("commission", problems: &problems) else { return CommissionSettings() }
        var settings = CommissionSettings()
        var names: Set<String> = []
        var regionOf: [String: String] = [:]
        for (index, element) in (object.array("regions", required: true, problems: &problems) ?? []).enumerated() {
            guard var region = ObjectReader(element, key: "commission.regions[\(index)]", problems: &problems) else { continue }
            let name = region.string("name", required: true, problems: &problems)
            if let name {
                if !isRegionName(name) {
                    problems.append(region.problem("name", "must be 1 to 32 letters, digits, '-' or '_', such as EU or JP"))
                } else if !names.insert(name).inserted {
                    problems.append(region.problem("name", "duplicate region name '\(name)'"))
                }
            }
            var countries: Set<String> = []
            let listed = region.array("countries", required: true, problems: &problems)
            if listed?.isEmpty == true { problems.append(region.problem("countries", "must list at least one storefront")) }
            for value in listed ?? [] {
                guard case .string(let code) = value, CountryCodes.iso3166Alpha2.contains(code) else {
                    problems.append(
                        region.problem("countries", "must be lowercase ISO 3166-1 alpha-2 codes, such as at or jp, not \(value.text)"))
                    continue
                }
                if let other = regionOf[code], other != name {
                    problems.append(
                        region.problem("countries", "'\(code)' is already in region \(other): a storefront is in one region at most"))
                }
                regionOf[code] = name ?? ""
                countries.insert(code)
            }
            let linkOut = readTerms(&region, defaultFrom: nil, windowDays: true, problems: &problems)
            // In-app terms are optional: a config written before them reads exactly as it did.
            var inApp: CommissionTerms?
            if var terms = region.object("inApp", problems: &problems) {
                inApp = readTerms(&terms, defaultFrom: linkOut?.from, windowDays: false, problems: &problems)
                terms.reportUnknownKeys(problems: &problems)
            }
            region.reportUnknownKeys(problems: &problems)
            if let name, let linkOut {
                settings.regions.append(CommissionRegion(name: name, countries: countries, linkOut: linkOut, inApp: inApp))
            }
        }
        object.reportUnknownKeys(problems: &problems)
        return settings
    }

    /// One kind of sale's terms from `object`: `rate` required, `reducedRate` defaulting to it, `from`
    /// required unless there is `defaultFrom`, `windowDays` required for a link-out and refused for in-app
    /// (charged on the transaction itself: no window to set). nil when a required key is missing or bad.
    private static func readTerms(
        _ object: inout ObjectReader, defaultFrom: Int64?, windowDays withWindow: Bool, problems: inout [ConfigProblem]
    ) -> CommissionTerms? {
        let fromText = object.string("from", required: defaultFrom == nil, problems: &problems)
        let from = fromText.flatMap(UTCDate.parseDay) ?? (fromText == nil ? defaultFrom : nil)
        if fromText != nil, from == nil {
            problems.append(object.problem("from", "must be a day as YYYY-MM-DD (UTC), such as 2026-10-01"))
        }
        let rate = object.number("rate", required: true, problems: &problems).flatMap { ratePPM($0, "rate", &object, &problems) }
        let reduced = object.number("reducedRate", problems: &problems).flatMap { ratePPM($0, "reducedRate", &object, &problems) }
        var window: Int64?
        if withWindow {
            window = object.integer(
                "windowDays", required: true, in: 1...366, "must be a whole number of days from 1 to 366", problems: &problems)
        } else if object.integer("windowDays", problems: &problems) != nil {
            problems.append(
                object.problem(
                    "windowDays",
                    "has no place here: in-app sales are charged on the transaction itself, every sale of the token, with no window after the tap"
                ))
        }
        let paidDays = object.integer(
            "subscriptionReducedAfterPaidDays", in: 1...3660, "must be a whole number of paid days from 1 to 3660, such as 365",
            problems: &problems)
        if paidDays != nil, reduced == nil {
            problems.append(object.problem("subscriptionReducedAfterPaidDays", "needs reducedRate, the rate it applies"))
        }
        guard let from, let rate, !withWindow || window != nil else { return nil }
        return CommissionTerms(
            from: from, ratePPM: rate, reducedRatePPM: reduced ?? rate, windowDays: window, subscriptionReducedAfterPaidDays: paidDays)
    }

    /// A rate from 0 up to 1, with at most 6 decimals (parts per million, computed exactly).
    private static func ratePPM(_ rate: Double, _ key: String, _ object: inout ObjectReader, _ problems: inout [ConfigProblem]) -> Int64? {
        let ppm = (rate * 1_000_000).rounded()
        guard rate >= 0, rate < 1, abs(rate * 1_000_000 - ppm) < 1e-6 else {
            problems.append(
                object.problem(key, "must be a fraction from 0 to under 1 with at most 6 decimals, such as 0.15 for 15 %, not \(rate)"))
            return nil
        }
        return Int64(ppm)
    }

    static func isRegionName(_ text: String) -> Bool {
        (1...32).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }
}
