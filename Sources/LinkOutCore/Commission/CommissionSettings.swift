/// Apple's commission on link-out sales, as settings: a region is a set of storefronts whose terms apply to
/// taps on or after `from`, at a standard or a reduced rate, on sales within `windowDays` of the tap (the
/// EU's terms from 2026-10-01 and Japan's from 2025-12-18: 15 % and 10 %, 7 days). Rates and windows move
/// with Apple's terms, so none of them is a constant here.
public struct CommissionSettings: Sendable, Equatable {
    public var regions: [CommissionRegion]

    public init(regions: [CommissionRegion] = []) {
        self.regions = regions
    }

    /// The region a storefront (lowercase ISO 3166-1 alpha-2) belongs to, if any.
    public func region(of country: String) -> CommissionRegion? {
        regions.first { $0.countries.contains(country) }
    }
}

public struct CommissionRegion: Sendable, Equatable {
    /// `EU`, `JP`: the statement's rows are named by it.
    public var name: String
    /// Lowercase ISO 3166-1 alpha-2 storefronts; each in one region at most.
    public var countries: Set<String>
    /// The first day (UTC, Unix ms at its midnight) whose taps these terms apply to.
    public var from: Int64
    /// Rates in parts per million (0.15 is 150,000), so a commission is computed in integers, exactly.
    public var ratePPM: Int64
    public var reducedRatePPM: Int64
    /// A sale counts when its `creationDate` is at most this many days of 24 hours after the tap.
    public var windowDays: Int64
    /// A subscription's line whose `subscriptionDaysOfPaidService` (paid days before it, 0 at its start)
    /// has reached this many is charged `reducedRatePPM` whatever the app's tier: Japan's reduced rate for
    /// subscriptions after their first year (365). nil: no such rule.
    public var subscriptionReducedAfterPaidDays: Int64?

    public init(
        name: String, countries: Set<String>, from: Int64, ratePPM: Int64, reducedRatePPM: Int64, windowDays: Int64,
        subscriptionReducedAfterPaidDays: Int64? = nil
    ) {
        self.name = name
        self.countries = countries
        self.from = from
        self.ratePPM = ratePPM
        self.reducedRatePPM = reducedRatePPM
        self.windowDays = windowDays
        self.subscriptionReducedAfterPaidDays = subscriptionReducedAfterPaidDays
    }

    /// The rate for a line of an app's tier: the reduced one for a subscription past
    /// `subscriptionReducedAfterPaidDays` of paid service (`paidDays`, the subscription line's own, or for a
    /// refund the line it refunds), else the tier's.
    public func ratePPM(_ tier: CommissionTier, subscriptionPaidDays paidDays: Int64? = nil) -> Int64 {
        if let threshold = subscriptionReducedAfterPaidDays, let paidDays, paidDays >= threshold { return reducedRatePPM }
        return tier == .reduced ? reducedRatePPM : ratePPM
    }

    public var windowMs: Int64 { windowDays * 86_400_000 }
}

/// An app's commission tier: `reduced` for programmes Apple grants it (the EU's and Japan's small
/// business and similar), `standard` otherwise.
public enum CommissionTier: String, Sendable, Equatable, CaseIterable {
    case standard
    case reduced
}
