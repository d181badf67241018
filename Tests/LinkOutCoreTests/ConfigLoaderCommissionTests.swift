import Testing
@testable import LinkOutCore

/// `commission.regions` and `apps[].commissionTier`: the settings the monthly statement computes with.
@Suite("ConfigLoader commission")
struct ConfigLoaderCommissionTests: ConfigChecking {
    typealias C = ConfigLoaderTests

    static func commission(_ regions: String, apps: String = "[\(C.app)]") -> String {
        C.config(apps: apps, extra: #""commission":{"regions":[\#(regions)]}"#)
    }

    static let eu = #"{"name":"EU","countries":["at","nl"],"from":"2026-10-01","rate":0.15,"reducedRate":0.10,"windowDays":7}"#

    @Test("regions read into exact rates, days and storefronts; tiers per app")
    func valid() throws {
        let jp = #"{"name":"JP","countries":["jp"],"from":"2025-12-18","rate":0.15,"windowDays":7}"#
        let jpYearOne = #"{"name":"JP","countries":["jp"],"from":"2025-12-18","rate":0.15,"reducedRate":0.10,"windowDays":7,"subscriptionReducedAfterPaidDays":365}"#
        #expect(try load(Self.commission(jpYearOne)).get().commission.regions.first?.subscriptionReducedAfterPaidDays == 365)
        let apps = #"[{"bundleId":"com.example","appAppleId":1234567890,"commissionTier":"reduced"},{"bundleId":"com.b","appAppleId":2}]"#
        let config = try load(Self.commission(Self.eu + "," + jp, apps: apps)).get()
        let regions = config.commission.regions
        #expect(regions.map(\.name) == ["EU", "JP"])
        #expect(regions[0].countries == ["at", "nl"] && regions[0].ratePPM == 150_000 && regions[0].reducedRatePPM == 100_000)
        #expect(regions[0].from == UTCDate.parseDay("2026-10-01") && regions[0].windowMs == 7 * 86_400_000)
        #expect(regions[1].reducedRatePPM == 150_000, "no reducedRate: the standard one")
        #expect(regions[1].subscriptionReducedAfterPaidDays == nil)
        #expect(config.commission.region(of: "nl")?.name == "EU" && config.commission.region(of: "us") == nil)
        #expect(config.apps.map(\.commissionTier) == [.reduced, .standard])
        #expect(try load(C.config()).get().commission.regions.isEmpty)
    }

    @Test("each rule names its key", arguments: [
        (#"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":1.5,"windowDays":7}"#, "commission.regions[0].rate", "from 0 to under 1"),
        (#"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":0.1234567,"windowDays":7}"#, "commission.regions[0].rate", "at most 6 decimals"),
        (#"{"name":"EU","countries":["AT"],"from":"2026-10-01","rate":0.15,"windowDays":7}"#, "commission.regions[0].countries", "lowercase ISO 3166-1"),
        (#"{"name":"EU","countries":[],"from":"2026-10-01","rate":0.15,"windowDays":7}"#, "commission.regions[0].countries", "at least one"),
        (#"{"name":"EU","countries":["at"],"from":"2026-10","rate":0.15,"windowDays":7}"#, "commission.regions[0].from", "YYYY-MM-DD"),
        (#"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":0.15}"#, "commission.regions[0].windowDays", "is required"),
        (#"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":0.15,"windowDays":0}"#, "commission.regions[0].windowDays", "from 1 to 366"),
        (#"{"name":"E U","countries":["at"],"from":"2026-10-01","rate":0.15,"windowDays":7}"#, "commission.regions[0].name", "letters, digits"),
        (#"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":0.15,"windowDays":7,"fee":1}"#, "commission.regions[0].fee", "unknown"),
        (#"{"name":"JP","countries":["jp"],"from":"2025-12-18","rate":0.15,"windowDays":7,"subscriptionReducedAfterPaidDays":365}"#,
         "commission.regions[0].subscriptionReducedAfterPaidDays", "needs reducedRate"),
        (#"{"name":"JP","countries":["jp"],"from":"2025-12-18","rate":0.15,"reducedRate":0.1,"windowDays":7,"subscriptionReducedAfterPaidDays":0}"#,
         "commission.regions[0].subscriptionReducedAfterPaidDays", "from 1 to 3660"),
    ])
    func problems(_ region: String, _ key: String, _ rule: String) {
        expectProblem(Self.commission(region), key: key, rule: rule)
    }

    @Test("a storefront in two regions, a name used twice, and an unknown tier are refused")
    func conflicts() {
        let again = #"{"name":"EU","countries":["be"],"from":"2026-10-01","rate":0.15,"windowDays":7}"#
        let overlapping = #"{"name":"NL","countries":["nl"],"from":"2026-10-01","rate":0.15,"windowDays":7}"#
        let found = problems(Self.commission(Self.eu + "," + again + "," + overlapping))
        #expect(found.contains { $0.key == "commission.regions[1].name" && $0.rule.contains("duplicate") }, "\(found)")
        #expect(found.contains { $0.key == "commission.regions[2].countries" && $0.rule.contains("'nl' is already in region EU") }, "\(found)")
        expectProblem(Self.commission(Self.eu, apps: #"[{"bundleId":"com.example","appAppleId":1,"commissionTier":"small"}]"#),
                      key: "apps[0].commissionTier", rule: "standard or reduced")
    }
}
