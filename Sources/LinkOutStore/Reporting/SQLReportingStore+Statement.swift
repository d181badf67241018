import LinkOutCore

extension StatementStore {
    /// `month`'s statement (one app's, or every app's), with the taps of links that expect no token (their
    /// `app`'s, or no app's), by the config's regions and the apps' tiers: the command's and the dashboard's,
    /// made one way.
    public func statement(_ month: UTCMonth, app: String?, config: GatewayConfig) throws -> MonthlyStatement {
        MonthlyStatement.make(
            month: month, tokens: try statementTokens(month, bundleId: app), lines: try statementLines(month, bundleId: app),
            taps: try statementTaps(month), commission: config.commission, apps: config.apps, links: config.links, app: app)
    }
}

/// What the monthly statement reads: a month's tokens, its line items with their tokens'
/// taps and storefronts (`StatementStore`). The rules are `MonthlyStatement`'s, in Core; these only read.
/// Each month's tokens against their accepted reports, for month close: SQLReportingStore+ReportStatus.
extension SQLReportingStore: StatementStore {
    /// A token's storefront and whether a shopper visited it, from `report_tokens AS r`: on SQLite its first
    /// shopper's visit's country, else the first visit's or registration's (`r.country`, schema 10); on
    /// PostgreSQL its `tokens` row, merged by the same rule (`t`, joined by `tokensJoin`).
    private var countryAndVisited: (country: String, visited: String, join: String) {
        database.isPostgres
            ? (
                "nullif(t.country, '')", "coalesce(t.hits, 0) > 0",
                "LEFT JOIN tokens AS t ON t.external_purchase_id = r.external_purchase_id"
            )
            : (
                "CASE WHEN r.shopper_visit IS NOT NULL THEN (SELECT v.country FROM visits AS v WHERE v.id = r.shopper_visit) ELSE r.country END",
                "r.shopper_visit IS NOT NULL", ""
            )
    }

    /// The tokens created in `month`, counted by app, storefront, whether a shopper came and type.
    public func statementTokens(_ month: UTCMonth, bundleId: String?) throws -> [MonthlyStatement.TokenCount] {
        try syncTokens()
        let (country, visited, join) = countryAndVisited
        var counts: [MonthlyStatement.TokenCount] = []
        try database.query(
            """
            SELECT r.bundle_id, \(country), CASE WHEN \(visited) THEN 1 ELSE 0 END, r.environment, count(*), r.token_type
            FROM report_tokens AS r \(join)
            WHERE r.token_creation_date >= ?1 AND r.token_creation_date < ?2 \(bundleId == nil ? "" : "AND r.bundle_id = ?3")
            GROUP BY 1, 2, 3, 4, 6
            """, [.integer(month.start), .integer(month.end)] + (bundleId.map { [.text($0)] } ?? [])
        ) { row in
            counts.append(
                MonthlyStatement.TokenCount(
                    bundleId: try row.text(0), country: try row.optionalText(1), visited: try row.int64(2) == 1, count: try row.int64(4),
                    environment: TokenEnvironment(rawValue: try row.text(3)) ?? .production, tokenType: try row.optionalText(5)))
        }
        return counts
    }

    /// The line items dated in `month` (their latest revision, withdrawn ones too: the statement leaves
    /// them out), with their tokens' taps, storefronts and types, and for a refund the date of what it refunds.
    public func statementLines(_ month: UTCMonth, bundleId: String?) throws -> [MonthlyStatement.SoldLine] {
        try syncTokens()
        let (country, _, join) = countryAndVisited
        let created = Self.lineItemCreationDate(postgres: database.isPostgres, alias: "l")
        var lines: [MonthlyStatement.SoldLine] = []
        try database.query(
            """
            SELECT l.bundle_id, l.external_purchase_id, l.body, r.token_creation_date, \(country), r.environment, r.token_type
            FROM line_items AS l JOIN report_tokens AS r ON r.external_purchase_id = l.external_purchase_id \(join)
            WHERE \(created) >= ?1 AND \(created) < ?2 \(bundleId == nil ? "" : "AND l.bundle_id = ?3")
            """, [.integer(month.start), .integer(month.end)] + (bundleId.map { [.text($0)] } ?? [])
        ) { row in
            // Lines were checked when stored: one that no longer reads is a bug, said as such.
            let item = try LineItem(json: Array(try row.text(2).utf8))
            lines.append(
                MonthlyStatement.SoldLine(
                    bundleId: try row.text(0), externalPurchaseId: try row.text(1), tapAt: try row.int64(3),
                    country: try row.optionalText(4),
                    item: item, refundedCreatedAt: nil, environment: TokenEnvironment(rawValue: try row.text(5)) ?? .production,
                    tokenType: try row.optionalText(6)))
        }
        for index in lines.indices {
            guard lines[index].item.kind == .refund, let reference = lines[index].item.referenceLineItemId else { continue }
            try database.query(
                "SELECT body FROM line_items WHERE bundle_id = ?1 AND line_item_id = ?2", [.text(lines[index].bundleId), .text(reference)]
            ) { row in
                let refunded = try LineItem(json: Array(try row.text(0).utf8))
                lines[index].refundedCreatedAt = refunded.creationDate
                lines[index].refundedPaidDays = refunded.subscriptionDaysOfPaidService
            }
        }
        return lines
    }

    /// The taps (`Tap`: shoppers', bots and the like apart) of `month` on links that expect no token, by
    /// link and the link's country.
    public func statementTaps(_ month: UTCMonth) throws -> [MonthlyStatement.TapCount] {
        var taps: [MonthlyStatement.TapCount] = []
        try database.query(
            """
            SELECT link, country, count(*) FROM untokened_visits
            WHERE reason = ?3 AND kind = ?4 AND seen_at >= ?1 AND seen_at < ?2 GROUP BY 1, 2 ORDER BY 1, 2
            """, [.integer(month.start), .integer(month.end), .text(Tap.storedReason), .text(Tap.storedKind)]
        ) { row in
            taps.append(MonthlyStatement.TapCount(link: try row.text(0), country: try row.text(1), count: try row.int64(2)))
        }
        return taps
    }
}
