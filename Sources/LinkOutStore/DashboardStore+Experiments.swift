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

    /// Per link, experiment and variant over the range: visits from `visit_buckets`, purchases from
    /// `line_items` joined to the token's experiment. Work grows with the line items (PostgreSQL: the
    /// `tokens` primary key); on SQLite, whose `visits` has no index on the id (see SQLiteTokenStore), with
    /// the shoppers' experiment visits of the range, read once.
    public func experimentOutcomes(_ range: Range, link: String?) throws -> [VariantOutcome] {
        var outcomes: [String: VariantOutcome] = [:]
        func key(_ link: String, _ experiment: String, _ variant: String) -> String { "\(link)\u{0}\(experiment)\u{0}\(variant)" }
        let base: [SQLValue] = [.integer(range.from), .integer(range.to), .text(link ?? "")]
        try database.query("""
            SELECT link, experiment, variant, sum(visits) FROM visit_buckets
            WHERE bucket_start >= ?1 AND bucket_start < ?2 AND (?3 = '' OR link = ?3) AND kind = 'shopper' AND experiment <> ''
            GROUP BY 1, 2, 3
            """, base) { row in
            let (link, experiment, variant) = (try row.text(0), try row.text(1), try row.text(2))
            outcomes[key(link, experiment, variant)] = VariantOutcome(
                link: link, experiment: experiment, variant: variant, visits: try row.int64(3), purchasers: 0,
                conversion: 0, interval: WilsonInterval(successes: 0, trials: 0), revenue: [:])
        }
        // A token's experiment is its first shopper's visit's; a token first seen in the range counts, and
        // only one a shopper reached (`hits > 0`: a token seen only by bots is in no variant's purchases).
        let sql = database.isPostgres
            ? """
                SELECT t.link, t.experiment, t.variant, t.external_purchase_id, l.body
                FROM line_items l JOIN tokens t ON t.external_purchase_id = l.external_purchase_id
                WHERE t.experiment IS NOT NULL AND t.hits > 0 AND t.first_seen >= ?1 AND t.first_seen < ?2 AND (?3 = '' OR t.link = ?3)
                """
            : """
                SELECT v.link, v.experiment, v.variant, v.external_purchase_id, l.body
                FROM (SELECT external_purchase_id, min(id) AS first FROM visits
                      WHERE kind = 'shopper' AND experiment IS NOT NULL AND first_seen >= ?1 AND first_seen < ?2
                        AND (?3 = '' OR link = ?3)
                        AND external_purchase_id IN (SELECT external_purchase_id FROM line_items)
                      GROUP BY 1) AS firsts
                JOIN visits v ON v.id = firsts.first
                JOIN line_items l ON l.external_purchase_id = firsts.external_purchase_id
                """
        var purchasers: [String: Set<String>] = [:]
        try database.query(sql, base) { row in
            let k = key(try row.text(0), try row.text(1), try row.text(2))
            guard outcomes[k] != nil,
                  let line = try? JSONSerialization.jsonObject(with: Data(try row.text(4).utf8)) as? [String: Any],
                  line["erroneouslySubmitted"] as? Bool != true else { return }
            purchasers[k, default: []].insert(try row.text(3))
            if let currency = line["reportingCurrency"] as? String, let net = (line["netAmountTaxExclusive"] as? NSNumber)?.int64Value {
                outcomes[k]!.revenue[currency, default: 0] += net
            }
        }
        for (k, tokens) in purchasers { outcomes[k]!.purchasers = Int64(tokens.count) }
        for k in outcomes.keys {
            let outcome = outcomes[k]!
            outcomes[k]!.conversion = outcome.visits > 0 ? min(1, Double(outcome.purchasers) / Double(outcome.visits)) : 0
            outcomes[k]!.interval = WilsonInterval(successes: outcome.purchasers, trials: outcome.visits)
        }
        return outcomes.values.sorted { ($0.link, $0.experiment, $0.variant) < ($1.link, $1.experiment, $1.variant) }
    }
}
