import Foundation
import LinkOutCore

extension DashboardStore {
    /// One variant's outcome: shoppers' visits from the buckets, and the tokens of those visits that have
    /// line items (purchasers) with their net revenue, per reporting currency in Apple's milli-units.
    public struct VariantOutcome: Codable, Sendable, Equatable {
        public var link: String
        public var experiment: String
        public var variant: String
        public var visits: Int64
        public var purchasers: Int64
        /// purchasers / visits, with its 95 % Wilson interval.
        public var conversion: Double
        public var interval: WilsonInterval
        /// `netAmountTaxExclusive` summed per `reportingCurrency` (2.99 is 2990), withdrawn lines left out.
        public var revenue: [String: Int64]
    }

    /// Per link, experiment and variant over the range: visits from the buckets (`visitRows`), purchases
    /// from the tally kept as line items are stored (`PurchaseTally`), both for the 5-minute buckets that
    /// start in the range, so that each variant's purchasers and visits count the same shoppers.
    public func experimentOutcomes(_ range: Range, link: String?) throws -> [VariantOutcome] {
        var outcomes: [String: VariantOutcome] = [:]
        func key(_ link: String, _ experiment: String, _ variant: String) -> String { "\(link)\u{0}\(experiment)\u{0}\(variant)" }
        let base: [SQLValue] = [.integer(range.from), .integer(range.to), .text(link ?? "")]
        try database.query(
            """
            SELECT link, experiment, variant, sum(visits) FROM \(Self.visitRows(from: 1, to: 2, split: 4))
            WHERE (?3 = '' OR link = ?3) AND kind = 'shopper' AND experiment <> ''
            GROUP BY 1, 2, 3
            """, base + [.integer(Self.hoursUntil(range))]
        ) { row in
            let (link, experiment, variant) = (try row.text(0), try row.text(1), try row.text(2))
            outcomes[key(link, experiment, variant)] = VariantOutcome(
                link: link, experiment: experiment, variant: variant, visits: try row.int64(3), purchasers: 0,
                conversion: 0, interval: WilsonInterval(successes: 0, trials: 0), revenue: [:])
        }
        // A token counts for its first shopper's variant (on PostgreSQL, in the bucket it was first seen
        // in, by any visit: the two differ only for a token a prefetch or bot saw before its shopper).
        // Rows whose tokens all went elsewhere (a withdrawn line, a first shopper found earlier) add up to 0
        // and are left out. Not synced here, on the admin thread: on SQLite the reporter's rounds and the
        // reporting counts (each on its own thread) bring new first shoppers in.
        try database.query(
            """
            SELECT link, experiment, variant, currency, sum(tokens), sum(net) FROM purchase_buckets
            WHERE bucket_start >= ?1 AND bucket_start < ?2 AND (?3 = '' OR link = ?3)
            GROUP BY link, experiment, variant, currency HAVING sum(tokens) > 0
            """, base
        ) { row in
            let k = key(try row.text(0), try row.text(1), try row.text(2))
            let currency = try row.text(3)
            if currency.isEmpty {
                outcomes[k]?.purchasers = try row.int64(4)
            } else {
                outcomes[k]?.revenue[currency] = try row.int64(5)
            }
        }
        for k in outcomes.keys {
            let outcome = outcomes[k]!
            outcomes[k]!.conversion = outcome.visits > 0 ? min(1, Double(outcome.purchasers) / Double(outcome.visits)) : 0
            outcomes[k]!.interval = WilsonInterval(successes: outcome.purchasers, trials: outcome.visits)
        }
        return outcomes.values.sorted { ($0.link, $0.experiment, $0.variant) < ($1.link, $1.experiment, $1.variant) }
    }
}
