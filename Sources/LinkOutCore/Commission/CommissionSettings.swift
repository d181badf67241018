/// Apple's commission, as settings: a region is a set of storefronts with its terms for each kind of sale
/// (`SaleKind`): a link-out's, charged on sales within `windowDays` of the tap (the EU's terms from
/// 2026-10-01 and Japan's from 2025-12-18: 15 % and 10 %, 7 days), and optionally an in-app payment
/// provider's, charged on the transaction itself. Rates and windows move with Apple's terms, so none of
/// them is a constant here.
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
    /// The terms of link-outs: the region's own keys in the config, as before in-app terms existed.
    public var linkOut: CommissionTerms
    /// The terms of in-app payment providers (`commission.regions[].inApp`); nil: none set, and such sales
    /// are charged nothing rather than a link-out's rate, which is not theirs.
    public var inApp: CommissionTerms?

    public init(name: String, countries: Set<String>, linkOut: CommissionTerms, inApp: CommissionTerms? = nil) {
        self.name = name
        self.countries = countries
        self.linkOut = linkOut
        self.inApp = inApp
    }

    /// A region with link-out terms only.
    public init(
        name: String, countries: Set<String>, from: Int64, ratePPM: Int64, reducedRatePPM: Int64, windowDays: Int64,
        subscriptionReducedAfterPaidDays: Int64? = nil
    ) {
        self.init(
            name: name, countries: countries,
            linkOut: CommissionTerms(
                from: from, ratePPM: ratePPM, reducedRatePPM: reducedRatePPM, windowDays: windowDays,
                subscriptionReducedAfterPaidDays: subscriptionReducedAfterPaidDays))
    }

    /// The terms a sale of `kind` is charged under, if the region has any.
    public func terms(_ kind: SaleKind) -> CommissionTerms? {
        switch kind {
        case .linkOut: linkOut
        case .inApp: inApp
        }
    }
}

/// One kind of sale's terms in a region: from which day, at which rates, on which sales.
public struct CommissionTerms: Sendable, Equatable {
    /// The first day (UTC, Unix ms at its midnight) whose taps (tokens created) these terms apply to.
    public var from: Int64
    /// Rates in parts per million (0.15 is 150,000), so a commission is computed in integers, exactly.
    public var ratePPM: Int64
    public var reducedRatePPM: Int64
    /// A sale counts when its `creationDate` is at most this many days of 24 hours after the tap. nil: every
    /// sale of the token counts, as for an in-app payment provider, charged on the transaction itself.
    public var windowDays: Int64?
    /// A subscription's line whose `subscriptionDaysOfPaidService` (paid days before it, 0 at its start)
    /// has reached this many is charged `reducedRatePPM` whatever the app's tier: Japan's reduced rate for
    /// subscriptions after their first year (365). nil: no such rule.
    public var subscriptionReducedAfterPaidDays: Int64?

    public init(from: Int64, ratePPM: Int64, reducedRatePPM: Int64, windowDays: Int64?, subscriptionReducedAfterPaidDays: Int64? = nil) {
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

    /// Whether a sale dated `dated` counts against a token tapped at `tapAt`: within the window, to the
    /// millisecond, or always without one.
    public func charges(saleAt dated: Int64, tapAt: Int64) -> Bool {
        guard let windowDays else { return true }
        return dated - tapAt <= windowDays * 86_400_000
    }
}

/// An app's commission tier: `reduced` for programmes Apple grants it (the EU's and Japan's small
/// business and similar), `standard` otherwise.
public enum CommissionTier: String, Sendable, Equatable, CaseIterable {
    case standard
    case reduced
}
