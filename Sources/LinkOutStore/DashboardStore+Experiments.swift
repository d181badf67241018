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

    /// Per link, experiment and variant over the range: visits from the buckets (`visitRows`), purchases from
    /// `line_items` joined to the token's experiment, counted and summed in SQL. Work grows with the line
    /// items of the range, through the per-token table's primary key: PostgreSQL's `tokens`; on SQLite,
    /// whose `visits` has no index on the id (see SQLiteTokenStore), `report_tokens`, which keeps each
    /// token's first shopper's visit (schema 7).
    public func experimentOutcomes(_ range: Range, link: String?) throws -> [VariantOutcome] {
        var outcomes: [String: VariantOutcome] = [:]
        func key(_ link: String, _ experiment: String, _ variant: String) -> String { "\(link)\u{0}\(experiment)\u{0}\(variant)" }
        let base: [SQLValue] = [.integer(range.from), .integer(range.to), .text(link ?? "")]
        try database.query("""
            SELECT link, experiment, variant, sum(visits) FROM \(Self.visitRows(from: 1, to: 2, split: 4))
            WHERE (?3 = '' OR link = ?3) AND kind = 'shopper' AND experiment <> ''
            GROUP BY 1, 2, 3
            """, base + [.integer(Self.hoursUntil(range))]) { row in
            let (link, experiment, variant) = (try row.text(0), try row.text(1), try row.text(2))
            outcomes[key(link, experiment, variant)] = VariantOutcome(
                link: link, experiment: experiment, variant: variant, visits: try row.int64(3), purchasers: 0,
                conversion: 0, interval: WilsonInterval(successes: 0, trials: 0), revenue: [:])
        }
        // A token's experiment is its first shopper's visit's, and a token a shopper reached counts (one seen
        // only by bots is in no variant's purchases). Which tokens a range holds differs by store: on SQLite
        // those whose first shopper came in the range, on PostgreSQL those first seen in it (any visit,
        // `tokens.first_seen`), which differ only for a token a prefetch or bot saw before its shopper.
        // Withdrawn lines (`erroneouslySubmitted`) count neither as a purchase nor as revenue.
        // A token's line items come after its visits (the checkout sells to a shopper who came through
        // linkout), so only those received since the range began can be its tokens': with a day's margin
        // for clocks, a one-day range reads a few thousand line items instead of every one (index
        // `line_items_received`).
        let arrived = "l.received_at >= ?1 - 86400000"
        let purchases: String
        let field: (String) -> String
        if database.isPostgres {
            field = { "(l.body::jsonb ->> '\($0)')" }
            purchases = """
                FROM line_items l JOIN tokens t ON t.external_purchase_id = l.external_purchase_id
                WHERE \(arrived) AND t.experiment IS NOT NULL AND t.hits > 0 AND t.first_seen >= ?1 AND t.first_seen < ?2
                    AND (?3 = '' OR t.link = ?3) AND \(field("erroneouslySubmitted")) IS DISTINCT FROM 'true'
                """
        } else {
            // Not synced here, on the admin thread: the reporter's rounds and the dashboard's reporting counts
            // (on their own threads, each time the page asks for a stale count) bring new visits in.
            field = { "json_extract(l.body, '$.\($0)')" }
            purchases = """
                FROM line_items l JOIN report_tokens t ON t.external_purchase_id = l.external_purchase_id
                WHERE \(arrived) AND t.experiment IS NOT NULL AND t.shopper_seen >= ?1 AND t.shopper_seen < ?2
                    AND (?3 = '' OR t.shopper_link = ?3) AND \(field("erroneouslySubmitted")) IS NOT 1
                """
        }
        let linkColumn = database.isPostgres ? "t.link" : "t.shopper_link"
        let net = database.isPostgres ? "(\(field("netAmountTaxExclusive")))::bigint" : field("netAmountTaxExclusive")
        // The join (one primary-key lookup per line item, most of the time here) made once, then counted
        // twice: purchasers per variant (rows with no currency), revenue per variant and currency.
        try database.query("""
            WITH bought AS MATERIALIZED (
                SELECT \(linkColumn) AS link, t.experiment AS experiment, t.variant AS variant,
                    t.external_purchase_id AS token, \(field("reportingCurrency")) AS currency, \(net) AS net
                \(purchases))
            SELECT link, experiment, variant, NULL, count(DISTINCT token) FROM bought GROUP BY 1, 2, 3
            UNION ALL
            SELECT link, experiment, variant, currency, sum(net) FROM bought
            WHERE currency IS NOT NULL AND net IS NOT NULL GROUP BY 1, 2, 3, 4
            """, base) { row in
            let k = key(try row.text(0), try row.text(1), try row.text(2))
            if let currency = try row.optionalText(3) {
                outcomes[k]?.revenue[currency] = try row.int64(4)
            } else {
                outcomes[k]?.purchasers = try row.int64(4)
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
