import LinkOutCore

/// The checkout's line items (`LineItemStore`), and a payment provider's, which take the same code inside
/// the ledger's transaction (`ProviderLedger`, SQLReportingStore+Providers).
extension SQLReportingStore: LineItemStore {
    /// What linkout knows of a token, or nil for an id it never recorded (`ProviderLedger.token`).
    public func token(_ externalPurchaseId: String) throws -> ExternalPurchaseToken? {
        try token(externalPurchaseId, locking: false)
    }

    /// With `locking`, the token's row stays locked to this transaction (PostgreSQL), so two instances
    /// taking lines for one token take them one after the other.
    private func token(_ externalPurchaseId: String, locking: Bool) throws -> ExternalPurchaseToken? {
        var found: ExternalPurchaseToken?
        try database.query(
            """
            SELECT external_purchase_id, bundle_id, app_apple_id, token_creation_date, token_type, token_expiration_date
            FROM report_tokens WHERE external_purchase_id = ?1 \(locking ? database.forUpdate : "")
            """, [.text(externalPurchaseId)]
        ) { row in
            found = ExternalPurchaseToken(
                appAppleId: try row.int64(2), bundleId: try row.text(1), tokenCreationDate: try row.int64(3),
                externalPurchaseId: try row.text(0),
                tokenType: try row.optionalText(4).flatMap(TokenType.init(rawValue:)), tokenExpirationDate: try row.optionalInt64(5))
        }
        return found
    }

    public func storeLineItems(
        externalPurchaseId: String, lineItemIds: [String], now: Int64,
        _ decide: (ExternalPurchaseToken, [LineItemRow]) throws -> [LineItemWrite]
    ) throws -> LineItemStoreResult {
        try syncTokens()
        return try database.transaction {
            try storeLineItemsInTransaction(externalPurchaseId: externalPurchaseId, lineItemIds: lineItemIds, now: now, decide)
        }
    }

    /// `storeLineItems` inside a transaction the caller holds: the one way lines are stored, whether a
    /// checkout posted them or a payment provider's event made them (`SQLReportingStore+Providers`).
    public func storeLineItemsInTransaction(
        externalPurchaseId: String, lineItemIds: [String], now: Int64,
        _ decide: (ExternalPurchaseToken, [LineItemRow]) throws -> [LineItemWrite]
    ) throws -> LineItemStoreResult {
        guard let token = try token(externalPurchaseId, locking: true) else { throw ReportingStoreError.unknownToken(externalPurchaseId) }
        var existing: [String: LineItemRow] = [:]
        let read: (any SQLRow) throws -> Void = { row in
            existing[try row.text(0)] = LineItemRow(
                lineItemId: try row.text(0), externalPurchaseId: try row.text(1), json: try row.text(2),
                revision: try row.int64(3), acceptedRevision: try row.int64(4))
        }
        let columns = "line_item_id, external_purchase_id, body, revision, accepted_revision"
        try database.query(
            "SELECT \(columns) FROM line_items WHERE bundle_id = ?1 AND external_purchase_id = ?2",
            [.text(token.bundleId), .text(externalPurchaseId)], row: read)
        for id in lineItemIds where existing[id] == nil {
            try database.query(
                "SELECT \(columns) FROM line_items WHERE bundle_id = ?1 AND line_item_id = ?2",
                [.text(token.bundleId), .text(id)], row: read)
        }
        let writes = try decide(token, existing.values.sorted { $0.lineItemId < $1.lineItemId })
        // The token's purchases are taken back before its lines change and counted again after
        // (`PurchaseTally`). On PostgreSQL, its `tokens` row is locked first: the writer's trigger that
        // moves a token's purchases when its first shopper comes then runs before this (and this reads
        // where it moved them) or after (and reads these lines). A token with no `tokens` row yet (known
        // from Apple's notification) has nothing to lock there: the trigger that inserts it waits for
        // this transaction's lock on its `report_tokens` row instead.
        let tally: (Int) throws -> Void = { sign in
            try self.database.query(
                PurchaseTally.apply(sign, tokensIn: "SELECT ?1", postgres: self.database.isPostgres), [.text(externalPurchaseId)])
        }
        // A checkout's retry resends the lines as stored: nothing to count again.
        let changing = writes.contains { existing[$0.lineItemId]?.json != $0.json }
        if changing {
            if database.isPostgres {
                try database.query("SELECT 1 FROM tokens WHERE external_purchase_id = ?1 FOR UPDATE", [.text(externalPurchaseId)])
            }
            try tally(-1)
        }
        var result = LineItemStoreResult()
        for write in writes {
            if let stored = existing[write.lineItemId] {
                guard stored.externalPurchaseId == externalPurchaseId else {
                    throw ReportingStoreError.lineItemOfAnotherToken(write.lineItemId)
                }
                if stored.json == write.json {
                    result.unchanged.append(write.lineItemId)
                    continue
                }
                try database.query(
                    """
                    UPDATE line_items SET body = ?3, revision = revision + 1, received_at = ?4
                    WHERE bundle_id = ?1 AND line_item_id = ?2
                    """, [.text(token.bundleId), .text(write.lineItemId), .text(write.json), .integer(now)])
                result.restated.append(write.lineItemId)
            } else {
                try database.query(
                    """
                    INSERT INTO line_items (bundle_id, line_item_id, external_purchase_id, body, revision, received_at)
                    VALUES (?1, ?2, ?3, ?4, 1, ?5)
                    """, [.text(token.bundleId), .text(write.lineItemId), .text(externalPurchaseId), .text(write.json), .integer(now)])
                result.added.append(write.lineItemId)
            }
        }
        if changing { try tally(1) }
        if !result.added.isEmpty || !result.restated.isEmpty {
            try database.query(
                "UPDATE report_tokens SET lines_changed_at = ?2, blocked = 0 WHERE external_purchase_id = ?1",
                [.text(externalPurchaseId), .integer(now)])
        }
        return result
    }
}
