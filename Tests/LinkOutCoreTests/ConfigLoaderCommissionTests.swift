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
        let jpYearOne =
            #"{"name":"JP","countries":["jp"],"from":"2025-12-18","rate":0.15,"reducedRate":0.10,"windowDays":7,"subscriptionReducedAfterPaidDays":365}"#
        #expect(try load(Self.commission(jpYearOne)).get().commission.regions.first?.linkOut.subscriptionReducedAfterPaidDays == 365)
        let apps = #"[{"bundleId":"com.example","appAppleId":1234567890,"commissionTier":"reduced"},{"bundleId":"com.b","appAppleId":2}]"#
        let config = try load(Self.commission(Self.eu + "," + jp, apps: apps)).get()
        let regions = config.commission.regions
        #expect(regions.map(\.name) == ["EU", "JP"])
        #expect(
            regions[0].countries == ["at", "nl"] && regions[0].linkOut.ratePPM == 150_000 && regions[0].linkOut.reducedRatePPM == 100_000)
        #expect(regions[0].linkOut.from == UTCDate.parseDay("2026-10-01") && regions[0].linkOut.windowDays == 7)
        #expect(regions[1].linkOut.reducedRatePPM == 150_000, "no reducedRate: the standard one")
        #expect(regions[1].linkOut.subscriptionReducedAfterPaidDays == nil)
        #expect(regions.allSatisfy { $0.inApp == nil }, "a region with today's keys only: link-out terms, no in-app terms")
        #expect(config.commission.region(of: "nl")?.name == "EU" && config.commission.region(of: "us") == nil)
        #expect(config.apps.map(\.commissionTier) == [.reduced, .standard])
        #expect(try load(C.config()).get().commission.regions.isEmpty)
    }

    @Test("in-app terms: rates of their own, from the region's day unless given, no window")
    func inAppTerms() throws {
        let region = #"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":0.15,"reducedRate":0.10,"windowDays":7,"#
        let inherits = try load(Self.commission(region + #""inApp":{"rate":0.20,"reducedRate":0.10}}"#)).get().commission.regions[0]
        #expect(
            inherits.inApp
                == CommissionTerms(from: UTCDate.parseDay("2026-10-01")!, ratePPM: 200_000, reducedRatePPM: 100_000, windowDays: nil))
        #expect(inherits.linkOut.ratePPM == 150_000 && inherits.linkOut.windowDays == 7)
        let own = try load(
            Self.commission(region + #""inApp":{"rate":0.2,"from":"2026-11-01","subscriptionReducedAfterPaidDays":365,"reducedRate":0.1}}"#)
        )
        .get().commission.regions[0]
        #expect(own.inApp?.from == UTCDate.parseDay("2026-11-01") && own.inApp?.subscriptionReducedAfterPaidDays == 365)
        #expect(own.terms(.inApp) == own.inApp && own.terms(.linkOut) == own.linkOut)
    }

    static let base = #"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":0.15,"windowDays":7,"inApp":"#

    @Test(
        "each in-app rule names its key",
        arguments: [
            (base + #"{"reducedRate":0.1}}"#, "commission.regions[0].inApp.rate", "is required"),
            (base + #"{"rate":1.2}}"#, "commission.regions[0].inApp.rate", "from 0 to under 1"),
            (base + #"{"rate":0.2,"reducedRate":-0.1}}"#, "commission.regions[0].inApp.reducedRate", "from 0 to under 1"),
            (base + #"{"rate":0.2,"from":"soon"}}"#, "commission.regions[0].inApp.from", "YYYY-MM-DD"),
            (base + #"{"rate":0.2,"windowDays":7}}"#, "commission.regions[0].inApp.windowDays", "on the transaction itself"),
            (
                base + #"{"rate":0.2,"subscriptionReducedAfterPaidDays":365}}"#,
                "commission.regions[0].inApp.subscriptionReducedAfterPaidDays", "needs reducedRate"
            ),
            (base + #"{"rate":0.2,"fee":1}}"#, "commission.regions[0].inApp.fee", "unknown"),
            (base + #""20 %"}"#, "commission.regions[0].inApp", "must be an object"),
        ])
    func inAppProblems(_ region: String, _ key: String, _ rule: String) {
        expectProblem(Self.commission(region), key: key, rule: rule)
    }

    @Test(
        "each rule names its key",
        arguments: [
            (
                #"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":1.5,"windowDays":7}"#, "commission.regions[0].rate",
                "from 0 to under 1"
            ),
            (
                #"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":0.1234567,"windowDays":7}"#, "commission.regions[0].rate",
                "at most 6 decimals"
            ),
            (
                #"{"name":"EU","countries":["AT"],"from":"2026-10-01","rate":0.15,"windowDays":7}"#, "commission.regions[0].countries",
                "lowercase ISO 3166-1"
            ),
            (
                #"{"name":"EU","countries":[],"from":"2026-10-01","rate":0.15,"windowDays":7}"#, "commission.regions[0].countries",
                "at least one"
            ),
            (#"{"name":"EU","countries":["at"],"from":"2026-10","rate":0.15,"windowDays":7}"#, "commission.regions[0].from", "YYYY-MM-DD"),
            (#"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":0.15}"#, "commission.regions[0].windowDays", "is required"),
            (
                #"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":0.15,"windowDays":0}"#, "commission.regions[0].windowDays",
                "from 1 to 366"
            ),
            (
                #"{"name":"E U","countries":["at"],"from":"2026-10-01","rate":0.15,"windowDays":7}"#, "commission.regions[0].name",
                "letters, digits"
            ),
            (
                #"{"name":"EU","countries":["at"],"from":"2026-10-01","rate":0.15,"windowDays":7,"fee":1}"#, "commission.regions[0].fee",
                "unknown"
            ),
            (
                #"{"name":"JP","countries":["jp"],"from":"2025-12-18","rate":0.15,"windowDays":7,"subscriptionReducedAfterPaidDays":365}"#,
                "commission.regions[0].subscriptionReducedAfterPaidDays", "needs reducedRate"
            ),
            (
                #"{"name":"JP","countries":["jp"],"from":"2025-12-18","rate":0.15,"reducedRate":0.1,"windowDays":7,"subscriptionReducedAfterPaidDays":0}"#,
                "commission.regions[0].subscriptionReducedAfterPaidDays", "from 1 to 3660"
            ),
        ])
    func problems(_ region: String, _ key: String, _ rule: String) {
        expectProblem(Self.commission(region), key: key, rule: rule)
    }

    @Test("a link may name its app, one of apps[]: a token-less link's taps are that app's on the statement")
    func linkApp() throws {
        let named = C.config(links: "[\(C.link(extra: #""app":"com.example","token":"none""#))]")
        #expect(try load(named).get().links.first?.app == "com.example")
        #expect(try load(C.config()).get().links.first?.app == nil)
        expectProblem(
            C.config(links: "[\(C.link(extra: #""app":"com.other""#))]"), key: "links[0].app",
            rule: "not one of apps[]' bundle ids (com.example)")
    }

    @Test("a storefront in two regions, a name used twice, and an unknown tier are refused")
    func conflicts() {
        let again = #"{"name":"EU","countries":["be"],"from":"2026-10-01","rate":0.15,"windowDays":7}"#
        let overlapping = #"{"name":"NL","countries":["nl"],"from":"2026-10-01","rate":0.15,"windowDays":7}"#
        let found = problems(Self.commission(Self.eu + "," + again + "," + overlapping))
        #expect(found.contains { $0.key == "commission.regions[1].name" && $0.rule.contains("duplicate") }, "\(found)")
        #expect(
            found.contains { $0.key == "commission.regions[2].countries" && $0.rule.contains("'nl' is already in region EU") }, "\(found)")
        expectProblem(
            Self.commission(Self.eu, apps: #"[{"bundleId":"com.example","appAppleId":1,"commissionTier":"small"}]"#),
            key: "apps[0].commissionTier", rule: "standard or reduced")
    }
}
