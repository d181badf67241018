import LinkOutCore

/// The payment providers' events (issue 28), in the reporting store, with one set of statements for
/// SQLite and PostgreSQL like the rest of reporting: the ledger inside its transaction (`ProviderLedger`),
/// and the store's way into it (`ProviderLedgerStore`).
extension SQLReportingStore: ProviderLedger, ProviderLedgerStore {
    /// Schema 11 (SQLite) and migration 11 (PostgreSQL): the providers' events, their ids bound to tokens,
    /// and Paddle's addresses.
    static func schemaEleven(postgres: Bool) -> String {
        let types = SQLColumnTypes(postgres: postgres)
        let (integer, text) = (types.integer, types.text)
        return """
            -- Every webhook event whose signature verified, once per provider and event id (both deliver at
            -- least once), with the body as signed, to read again when a parked event's binding arrives.
            CREATE TABLE provider_events (
                provider \(text) NOT NULL,
                event_id \(text) NOT NULL,
                type \(text) NOT NULL,
                object_id \(text) NOT NULL,
                -- The payment's: production or sandbox (Stripe's livemode, Paddle's configured secret).
                environment \(text) NOT NULL,
                occurred_at \(integer) NOT NULL,
                received_at \(integer) NOT NULL,
                -- ProviderOutcome: taken, ignored, unmatched, parked, waiting, held.
                outcome \(text) NOT NULL,
                external_purchase_id \(text),
                -- What a parked event waits for: a provider's id (sub_…, pi_…, txn_…, add_…), sub_…#start,
                -- line:<lineItemId> or token:<externalPurchaseId>.
                waiting_for \(text),
                problem \(text),
                body \(text) NOT NULL,
                PRIMARY KEY (provider, event_id)
            \(types.tableEnd);
            CREATE INDEX provider_events_open ON provider_events (provider, waiting_for) WHERE outcome IN ('parked', 'waiting');
            CREATE INDEX provider_events_received ON provider_events (received_at);
            -- A provider's ids (session, payment intent, subscription, invoice, transaction) bound to the token
            -- their first event named, and the line they made: refunds and renewals carry no metadata.
            CREATE TABLE provider_bindings (
                provider \(text) NOT NULL,
                object_id \(text) NOT NULL,
                external_purchase_id \(text) NOT NULL,
                line_item_id \(text),
                bound_at \(integer) NOT NULL,
                PRIMARY KEY (provider, object_id)
            \(types.tableEnd);
            -- Paddle's addresses' countries: its transactions name only address_id.
            CREATE TABLE provider_addresses (
                provider \(text) NOT NULL,
                address_id \(text) NOT NULL,
                country \(text) NOT NULL,
                updated_at \(integer) NOT NULL,
                PRIMARY KEY (provider, address_id)
            \(types.tableEnd);
            """
    }

    /// Runs `body` in one transaction. On PostgreSQL an advisory lock serialises every instance's provider
    /// events: without it, an event parked on one instance while its binding commits on another would each
    /// miss the other and wait forever. Webhooks are few, so one at a time costs nothing.
    public func withProviderLedger<Result>(_ body: (any ProviderLedger) throws -> Result) throws -> Result {
        try syncTokens()
        return try database.transaction {
            if database.isPostgres {
                try database.query("SELECT pg_advisory_xact_lock(?1)", [.integer(Self.providerLockKey)]) { _ in }
            } else if let sqlite = database as? SQLiteConnection {
                // The visits committed since the sync above, inside the write lock this transaction holds.
                while try syncChunk(sqlite) {}
            }
            return try body(self)
        }
    }

    /// The bytes of "linkpsp": apart from the migrations' key.
    static let providerLockKey: Int64 = 0x6c_69_6e_6b_70_73_70

    public func insertEvent(_ event: ProviderEventRecord) throws -> Bool {
        var inserted = false
        try database.query(
            """
            INSERT INTO provider_events (provider, event_id, type, object_id, environment, occurred_at, received_at, outcome,
                external_purchase_id, waiting_for, problem, body)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
            ON CONFLICT (provider, event_id) DO NOTHING RETURNING event_id
            """,
            [
                .text(event.provider.rawValue), .text(event.eventId), .text(event.type), .text(event.objectId),
                .text(event.environment.rawValue), .integer(event.occurredAt), .integer(event.receivedAt), .text(event.outcome.rawValue),
                .text(event.externalPurchaseId), .text(event.waitingFor), .text(event.problem), .text(event.body),
            ]
        ) { _ in inserted = true }
        return inserted
    }

    public func setOutcome(
        _ provider: PaymentProvider, eventId: String, _ outcome: ProviderOutcome, externalPurchaseId: String?, waitingFor: String?,
        problem: String?, now: Int64
    ) throws {
        try database.query(
            """
            UPDATE provider_events SET outcome = ?3, external_purchase_id = coalesce(?4, external_purchase_id), waiting_for = ?5, problem = ?6
            WHERE provider = ?1 AND event_id = ?2
            """,
            [
                .text(provider.rawValue), .text(eventId), .text(outcome.rawValue), .text(externalPurchaseId), .text(waitingFor),
                .text(problem),
            ])
    }

    public func binding(_ provider: PaymentProvider, _ objectId: String) throws -> ProviderBinding? {
        var found: ProviderBinding?
        try database.query(
            "SELECT external_purchase_id, line_item_id FROM provider_bindings WHERE provider = ?1 AND object_id = ?2",
            [.text(provider.rawValue), .text(objectId)]
        ) { row in
            found = ProviderBinding(externalPurchaseId: try row.text(0), lineItemId: try row.optionalText(1))
        }
        return found
    }

    public func bind(
        _ provider: PaymentProvider, _ objectIds: [String], externalPurchaseId: String, lineItemId: String?, now: Int64
    ) throws -> [String] {
        var changed: [String] = []
        for id in objectIds where !id.isEmpty {
            let before = try binding(provider, id)
            if let before {
                guard before.externalPurchaseId == externalPurchaseId, before.lineItemId == nil, let lineItemId else { continue }
                try database.query(
                    "UPDATE provider_bindings SET line_item_id = ?3 WHERE provider = ?1 AND object_id = ?2",
                    [.text(provider.rawValue), .text(id), .text(lineItemId)])
            } else {
                try database.query(
                    """
                    INSERT INTO provider_bindings (provider, object_id, external_purchase_id, line_item_id, bound_at)
                    VALUES (?1, ?2, ?3, ?4, ?5)
                    """, [.text(provider.rawValue), .text(id), .text(externalPurchaseId), .text(lineItemId), .integer(now)])
            }
            changed.append(id)
        }
        return changed
    }

    public func openEvents(_ provider: PaymentProvider?, waitingFor keys: [String]?) throws -> [ProviderEventRecord] {
        var values: [SQLValue] = []
        var conditions = ["outcome IN ('parked', 'waiting')"]
        if let provider {
            values.append(.text(provider.rawValue))
            conditions.append("provider = ?\(values.count)")
        }
        if let keys {
            if keys.isEmpty { return [] }
            let start = values.count
            values += keys.map { SQLValue.text($0) }
            conditions.append("waiting_for IN (\(keys.indices.map { "?\(start + $0 + 1)" }.joined(separator: ", ")))")
        }
        return try events(where: conditions.joined(separator: " AND "), values, order: "received_at, event_id", limit: 10_000)
    }

    /// Events as kept, by a condition on `provider_events`.
    func events(where condition: String, _ values: [SQLValue], order: String, limit: Int) throws -> [ProviderEventRecord] {
        var found: [ProviderEventRecord] = []
        try database.query(
            """
            SELECT provider, event_id, type, object_id, environment, occurred_at, received_at, outcome, external_purchase_id,
                waiting_for, problem, body
            FROM provider_events WHERE \(condition) ORDER BY \(order) LIMIT \(limit)
            """, values
        ) { row in
            guard let provider = PaymentProvider(rawValue: try row.text(0)),
                let outcome = ProviderOutcome(rawValue: try row.text(7))
            else { return }
            found.append(
                ProviderEventRecord(
                    provider: provider, eventId: try row.text(1), type: try row.text(2), objectId: try row.text(3),
                    environment: TokenEnvironment(rawValue: try row.text(4)) ?? .production, occurredAt: try row.int64(5),
                    receivedAt: try row.int64(6), outcome: outcome, externalPurchaseId: try row.optionalText(8),
                    waitingFor: try row.optionalText(9), problem: try row.optionalText(10), body: try row.text(11)))
        }
        return found
    }

    public func addressCountry(_ provider: PaymentProvider, _ addressId: String) throws -> String? {
        var country: String?
        try database.query(
            "SELECT country FROM provider_addresses WHERE provider = ?1 AND address_id = ?2",
            [.text(provider.rawValue), .text(addressId)]
        ) { country = try $0.text(0) }
        return country
    }

    public func setAddressCountry(_ provider: PaymentProvider, _ addressId: String, country: String, now: Int64) throws {
        try database.query(
            """
            INSERT INTO provider_addresses (provider, address_id, country, updated_at) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (provider, address_id) DO UPDATE SET country = excluded.country, updated_at = excluded.updated_at
            """, [.text(provider.rawValue), .text(addressId), .text(country), .integer(now)])
    }

    public func lineItem(externalPurchaseId: String, lineItemId: String) throws -> LineItem? {
        var json: String?
        try database.query(
            "SELECT body FROM line_items WHERE external_purchase_id = ?1 AND line_item_id = ?2",
            [.text(externalPurchaseId), .text(lineItemId)]
        ) { json = try $0.text(0) }
        return try json.map { try LineItem(json: Array($0.utf8)) }
    }

    /// The providers' events by provider and outcome, and the newest `limit` parked, waiting and held ones.
    public func providerEventCounts(limit: Int = 20) throws -> ProviderEventCounts {
        var counts = ProviderEventCounts()
        try database.query("SELECT provider, outcome, count(*) FROM provider_events GROUP BY 1, 2 ORDER BY 1, 2", []) { row in
            counts.rows.append(.init(provider: try row.text(0), outcome: try row.text(1), count: try row.int64(2)))
        }
        counts.open = try events(
            where: "outcome IN ('parked', 'waiting', 'held')", [], order: "received_at DESC, event_id", limit: max(0, limit))
        return counts
    }
}
