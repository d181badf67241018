/// The experiments' purchases, counted as they are stored (`purchase_buckets`, SQLite schema 8 and
/// PostgreSQL migration 8), so that the dashboard reads a few rows per bucket instead of joining every line
/// item of the range to its token: that join took 0.5 s over 30 days of a 10-million-token store
/// (bench/RESULTS.md), one primary-key lookup per line item.
///
/// A token counts where its visits do: in the 5-minute bucket of its first shopper's visit (on PostgreSQL,
/// of `tokens.first_seen`), under that visit's link, experiment and variant. Its share is one row with
/// currency `''` (one purchaser) when it has a line that is not withdrawn (`erroneouslySubmitted`), and one
/// row per reporting currency of those lines (one purchaser paying in it, and their net amounts summed).
///
/// Every change goes through `apply`: a token's share is taken back (sign -1) under what it was counted
/// under, the token's lines or first shopper change, and the share is added again (sign 1) from what is
/// stored now. Taking back and adding again read the same line items with the same rule, so a revision, a
/// withdrawal or a first shopper found late moves exactly what was counted, and nothing counts twice.
/// Who calls it:
/// - `SQLReportingStore.storeLineItems`, around the writes, on both stores;
/// - on SQLite, the reporting sync and the first shoppers' backfill, around each chunk, for the chunk's
///   tokens that have line items (the only way a token's first shopper changes there);
/// - on PostgreSQL, triggers on `tokens`, whose first shopper changes in the writer's own upsert, from
///   any instance (`postgresMigrationEight`).
enum PurchaseTally {
    /// `purchase_buckets`, in either store's types. Rows whose share went back to 0 stay; reads skip them.
    static func table(postgres: Bool) -> String {
        let type = SQLColumnTypes(postgres: postgres)
        return """
            CREATE TABLE purchase_buckets (
                bucket_start \(type.integer) NOT NULL,
                link \(type.text) NOT NULL,
                experiment \(type.text) NOT NULL,
                variant \(type.text) NOT NULL,
                -- '' for every purchaser; a reporting currency for those paying in it
                currency \(type.text) NOT NULL,
                -- tokens with a line that is not withdrawn (in this currency)
                tokens \(type.integer) NOT NULL,
                -- netAmountTaxExclusive summed, in milli-units (0 on the '' rows)
                net \(type.integer) NOT NULL,
                PRIMARY KEY (bucket_start, link, experiment, variant, currency)
            \(type.tableEnd);
            """
    }

    /// Adds (`sign` 1) or takes back (-1) the shares of the tokens `attributed` selects, as columns
    /// `external_purchase_id, seen, link, experiment, variant` (the first shopper's time, link, experiment
    /// and variant), from their line items as stored now. A token with no experiment, or not selected,
    /// adds nothing.
    static func apply(_ sign: Int, attributed: String, postgres: Bool) -> String {
        let field: (String) -> String =
            postgres
            ? { "(l.body::jsonb ->> '\($0)')" }
            : { "json_extract(l.body, '$.\($0)')" }
        let withdrawn =
            postgres
            ? "\(field("erroneouslySubmitted")) IS DISTINCT FROM 'true'"
            : "\(field("erroneouslySubmitted")) IS NOT 1"
        let net = postgres ? "(\(field("netAmountTaxExclusive")))::bigint" : field("netAmountTaxExclusive")
        return """
            WITH attributed AS (\(attributed)),
            bought AS (
                SELECT a.seen - a.seen % \(DashboardBuckets.widthMs) AS bucket_start, a.link AS link,
                    a.experiment AS experiment, coalesce(a.variant, '') AS variant, a.external_purchase_id AS token,
                    \(field("reportingCurrency")) AS currency, \(net) AS net
                FROM attributed AS a JOIN line_items AS l ON l.external_purchase_id = a.external_purchase_id
                WHERE a.experiment IS NOT NULL AND \(withdrawn))
            INSERT INTO purchase_buckets (bucket_start, link, experiment, variant, currency, tokens, net)
            SELECT * FROM (
                SELECT bucket_start, link, experiment, variant, '' AS currency, \(sign) * count(DISTINCT token) AS tokens,
                    0 AS net
                FROM bought GROUP BY bucket_start, link, experiment, variant
                UNION ALL
                SELECT bucket_start, link, experiment, variant, currency, \(sign) * count(DISTINCT token), \(sign) * sum(net)
                FROM bought WHERE currency IS NOT NULL AND net IS NOT NULL
                GROUP BY bucket_start, link, experiment, variant, currency) AS delta
            WHERE true ORDER BY bucket_start, link, experiment, variant, currency
            ON CONFLICT (bucket_start, link, experiment, variant, currency) DO UPDATE SET
                tokens = purchase_buckets.tokens + excluded.tokens, net = purchase_buckets.net + excluded.net
            """
    }

    /// Adds (1) or takes back (-1) the shares of the tokens `tokens` selects (a query of
    /// `external_purchase_id`s), as each store attributes them: on SQLite by `report_tokens`' first shopper
    /// (schema 7); on PostgreSQL by `tokens`' row (its experiment is its first shopper's, its `first_seen`
    /// any visit's), for a token a shopper reached.
    static func apply(_ sign: Int, tokensIn tokens: String, postgres: Bool) -> String {
        let attributed =
            postgres
            ? "SELECT external_purchase_id, first_seen AS seen, link, experiment, variant FROM tokens WHERE hits > 0"
            : "SELECT external_purchase_id, shopper_seen AS seen, shopper_link AS link, experiment, variant FROM report_tokens WHERE true"
        return apply(sign, attributed: "\(attributed) AND external_purchase_id IN (\(tokens))", postgres: postgres)
    }

    /// On SQLite, the tokens of the shoppers' visits with ids in (`?1`, `?2`] that have line items: those
    /// whose first shopper a sync or backfill chunk may change.
    static let sqliteChunkTokens = """
        SELECT v.external_purchase_id FROM visits AS v WHERE v.id > ?1 AND v.id <= ?2 AND v.kind = 'shopper'
            AND EXISTS (SELECT 1 FROM line_items AS l WHERE l.external_purchase_id = v.external_purchase_id)
        """

    /// Runs `change` (which may change the first shoppers of the chunk's tokens) between taking back and
    /// adding again their shares, on SQLite, inside the caller's transaction.
    static func aroundSQLiteChunk<Result>(
        _ database: any ReportingDatabase, from: Int64, upTo: Int64, _ change: () throws -> Result
    ) throws -> Result {
        let tokens: [SQLValue] = [.integer(from), .integer(upTo)]
        try database.query(apply(-1, tokensIn: sqliteChunkTokens, postgres: false), tokens)
        let result = try change()
        try database.query(apply(1, tokensIn: sqliteChunkTokens, postgres: false), tokens)
        return result
    }

    /// Schema 8 and migration 8 drop the line items' arrival index of 7: only the experiments' join read
    /// by it.
    static let dropLineItemsByArrival = "DROP INDEX line_items_received;"

    /// SQLite schema 8: the table, filled from the line items already stored. Tokens whose first shopper
    /// the backfill has not read yet add nothing now and their share when it does.
    static let sqliteSchemaEight = """
        \(dropLineItemsByArrival)
        \(table(postgres: false))
        \(apply(1, tokensIn: "SELECT external_purchase_id FROM line_items", postgres: false));
        """

    /// PostgreSQL migration 8: the table, filled from the line items already stored, and the triggers that
    /// move a token's share when the writer changes its first shopper.
    ///
    /// - A token already in `tokens` changes attribution only when its first shopper comes (hits from 0) or
    ///   an earlier visit lowers `first_seen`: a row trigger with that `WHEN`, which costs the writer's
    ///   upsert nothing for the other rows (a repeat visit). Each move upserts its rows in key order, but
    ///   two moves of one statement go in token order: two batches (or a batch split over statements and
    ///   a line-item post) moving shares between the same buckets in opposite orders can deadlock.
    ///   PostgreSQL then aborts one, which is retried (a writer batch, by its identity) or answered 503
    ///   (a post, which the checkout retries). That takes a first shopper arriving after its token's line
    ///   items, twice, in each of two concurrent transactions; a statement trigger with transition tables
    ///   would order them, at the price of copying every updated row of every batch.
    /// - A token inserted into `tokens` had no share (nothing to attribute it to), but may already have
    ///   line items: only if reporting knew it before any visit, from Apple's notification (`learnt_from`
    ///   is not `visit`). The statement trigger that brings new tokens into reporting adds the shares of
    ///   those. It looks for them only when its insert into `report_tokens` found one there already, so
    ///   the writer's batches pay one count of their new tokens (`bench/postgres`-style A/B in
    ///   bench/RESULTS.md).
    static let postgresMigrationEight = """
        -- No writer may move a first shopper or store a line between the fill and the triggers (neither
        -- would count it), nor a refusal between `refusal_hours`' fill and this migration's end.
        LOCK TABLE tokens, line_items, refusal_buckets IN SHARE ROW EXCLUSIVE MODE;
        \(dropLineItemsByArrival)
        \(table(postgres: true))
        \(apply(1, tokensIn: "SELECT external_purchase_id FROM line_items", postgres: true));
        CREATE FUNCTION linkout_move_purchases() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            \(apply(-1, attributed: """
                SELECT OLD.external_purchase_id AS external_purchase_id, OLD.first_seen AS seen, OLD.link AS link,
                    OLD.experiment AS experiment, OLD.variant AS variant WHERE OLD.hits > 0
                """, postgres: true));
            \(apply(1, attributed: """
                SELECT NEW.external_purchase_id AS external_purchase_id, NEW.first_seen AS seen, NEW.link AS link,
                    NEW.experiment AS experiment, NEW.variant AS variant WHERE NEW.hits > 0
                """, postgres: true));
            RETURN NULL;
        END $$;
        CREATE TRIGGER tokens_purchases_moved AFTER UPDATE ON tokens FOR EACH ROW
            WHEN ((OLD.hits = 0 AND NEW.hits > 0) OR NEW.first_seen <> OLD.first_seen)
            EXECUTE FUNCTION linkout_move_purchases();
        CREATE OR REPLACE FUNCTION linkout_report_new_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            inserted bigint;
        BEGIN
            \(PostgresMigrations.reportNewTokens)
            GET DIAGNOSTICS inserted = ROW_COUNT;
            -- Almost every batch: each new token was new to reporting too, so none has line items yet. Told
            -- by counting, not by a join whose plan would hang on the statistics of the day.
            IF inserted < (SELECT count(*) FROM new_tokens) THEN
                -- Waits for a line-item post holding such a token's row (storeLineItems), so that its lines
                -- are counted here, or there, never both or neither: it found no tokens row to count them
                -- under.
                PERFORM 1 FROM report_tokens AS r JOIN new_tokens AS n ON n.external_purchase_id = r.external_purchase_id
                WHERE n.hits > 0 AND r.learnt_from <> 'visit' ORDER BY r.external_purchase_id FOR UPDATE OF r;
                \(apply(1, attributed: """
                    SELECT n.external_purchase_id, n.first_seen AS seen, n.link, n.experiment, n.variant
                    FROM new_tokens AS n JOIN report_tokens AS r ON r.external_purchase_id = n.external_purchase_id
                    WHERE n.hits > 0 AND r.learnt_from <> 'visit'
                    """, postgres: true));
            END IF;
            RETURN NULL;
        END $$;
        """
}
