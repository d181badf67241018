/// The PostgreSQL schema, as an ordered list of migrations. `linkout store migrate` applies the missing
/// ones (`PostgresMigrations+Apply`); `serve` and `tokens export` only check the version, so several
/// instances never race to change a shared schema while serving, and an operator chooses when it changes.
///
/// **Frozen.** Each migration's SQL is the literal text it ran when it was released, byte for byte: a
/// database upgraded by a later build must end as the one that build makes new, and the upgrade tests can
/// only check that if a released migration never changes. So no migration names a type or constant of the
/// live code (a column list, a table built from a key type, another migration's text, a trigger's
/// statement shared with the live writes): changing those must not rewrite history. The literals are raw
/// (`#"""`), so nothing in them can be interpolated. `MigrationHashTests` pins a hash of each released
/// migration; a change is a new migration at the end of the list, never an edit.
enum PostgresMigrations {

    static let all: [Migration] = [
        Migration(
            version: 1, summary: "tokens and untokened_visits",
            sql: #"""
                -- One row per externalPurchaseId, merged on write by INSERT ... ON CONFLICT. "C" collation: ids
                -- are ASCII, and byte order is cheaper to compare and the same on every server.
                CREATE TABLE tokens (
                    external_purchase_id TEXT COLLATE "C" PRIMARY KEY,
                    app_apple_id BIGINT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    token_creation_date BIGINT NOT NULL,
                    token_type TEXT,
                    token_expiration_date BIGINT,
                    environment TEXT NOT NULL,
                    link TEXT NOT NULL,
                    country TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    first_seen BIGINT NOT NULL,
                    last_seen BIGINT NOT NULL,
                    hits BIGINT NOT NULL,
                    stale BOOLEAN NOT NULL
                );
                -- The export's order; first_seen grows with time, so new entries land at the index's right edge.
                CREATE INDEX tokens_first_seen ON tokens (first_seen, external_purchase_id);
                CREATE TABLE untokened_visits (
                    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                    link TEXT NOT NULL,
                    country TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    seen_at BIGINT NOT NULL
                );
                """#),
        Migration(
            version: 2, summary: "spool_replays",
            sql: #"""
                -- How far each instance's outage spool has been replayed: one row per spool stream (the spool
                -- file's id and table), holding the last spool row id applied. Moved forward in the same
                -- transaction as the replayed visits, so a replay repeated after a crash skips what it applied.
                CREATE TABLE spool_replays (
                    stream TEXT COLLATE "C" PRIMARY KEY,
                    last_rowid BIGINT NOT NULL,
                    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
                );
                """#),
        Migration(
            version: 3, summary: "visit kinds and experiments",
            sql: #"""
                -- Prefetches, HEADs and bots are recorded but are not hits: they count in other_visits. A token's
                -- experiment and variant are its first visit's. Untokened visits keep their kind.
                ALTER TABLE tokens
                    ADD COLUMN other_visits BIGINT NOT NULL DEFAULT 0,
                    ADD COLUMN experiment TEXT,
                    ADD COLUMN variant TEXT;
                ALTER TABLE untokened_visits ADD COLUMN kind TEXT NOT NULL DEFAULT 'shopper';
                """#),
        Migration(
            version: 4, summary: "applied_batches and unrouted paths",
            sql: #"""
                -- Exactly-once batches: each writer batch's identity (the instance's id for this run and the
                -- batch's sequence number) is inserted in the same transaction as its visits. A retry of a batch
                -- whose COMMIT landed although its acknowledgement was lost finds its row and adds nothing; a
                -- spool replay skips the visits of a batch that landed here before it was spooled (via_spool is
                -- false only for a batch the writer committed directly). Rows older than 7 days are pruned.
                CREATE TABLE applied_batches (
                    instance_id TEXT COLLATE "C" NOT NULL,
                    sequence BIGINT NOT NULL,
                    via_spool BOOLEAN NOT NULL DEFAULT false,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                    PRIMARY KEY (instance_id, sequence)
                );
                CREATE INDEX applied_batches_applied_at ON applied_batches (applied_at);
                -- A token that arrived on a path no link serves (link 'unrouted') keeps that path.
                ALTER TABLE tokens ADD COLUMN path TEXT;
                """#),
        Migration(
            version: 5, summary: "reporting to Apple",
            sql: #"""
                -- The same tables as the SQLite store's (SQLReportingStore.sqliteSchema), which the reporting
                -- statements are written against once for both. See there for what each column means.
                CREATE TABLE report_tokens (
                    external_purchase_id TEXT COLLATE "C" PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    app_apple_id BIGINT NOT NULL,
                    environment TEXT NOT NULL,
                    token_creation_date BIGINT NOT NULL,
                    token_type TEXT,
                    token_expiration_date BIGINT,
                    learnt_from TEXT NOT NULL DEFAULT 'visit',
                    lines_changed_at BIGINT,
                    open_report TEXT COLLATE "C",
                    accepted_status TEXT,
                    blocked INTEGER NOT NULL DEFAULT 0,
                    due_now INTEGER NOT NULL DEFAULT 0,
                    reminded INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX report_tokens_unreported ON report_tokens (token_creation_date) WHERE accepted_status IS NULL;
                CREATE INDEX report_tokens_changed ON report_tokens (lines_changed_at) WHERE lines_changed_at IS NOT NULL;
                CREATE TABLE line_items (
                    bundle_id TEXT COLLATE "C" NOT NULL,
                    line_item_id TEXT COLLATE "C" NOT NULL,
                    external_purchase_id TEXT COLLATE "C" NOT NULL,
                    body TEXT NOT NULL,
                    revision BIGINT NOT NULL,
                    accepted_revision BIGINT NOT NULL DEFAULT 0,
                    received_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, line_item_id)
                );
                CREATE INDEX line_items_token ON line_items (external_purchase_id);
                CREATE TABLE reports (
                    request_identifier TEXT COLLATE "C" PRIMARY KEY,
                    external_purchase_id TEXT COLLATE "C" NOT NULL,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    status TEXT NOT NULL,
                    body TEXT NOT NULL,
                    state TEXT NOT NULL,
                    attempts BIGINT NOT NULL DEFAULT 0,
                    next_attempt_at BIGINT NOT NULL,
                    lease_until BIGINT,
                    created_at BIGINT NOT NULL,
                    finished_at BIGINT,
                    last_answer TEXT
                );
                CREATE INDEX reports_open ON reports (next_attempt_at) WHERE state IN ('pending', 'sending');
                CREATE INDEX reports_token ON reports (external_purchase_id);
                CREATE TABLE report_lines (
                    request_identifier TEXT COLLATE "C" NOT NULL,
                    bundle_id TEXT COLLATE "C" NOT NULL,
                    line_item_id TEXT COLLATE "C" NOT NULL,
                    revision BIGINT NOT NULL,
                    PRIMARY KEY (request_identifier, line_item_id)
                );
                CREATE TABLE notifications (
                    uuid TEXT COLLATE "C" PRIMARY KEY,
                    type TEXT NOT NULL,
                    subtype TEXT,
                    signed_date BIGINT NOT NULL,
                    external_purchase_id TEXT COLLATE "C",
                    environment TEXT NOT NULL,
                    outcome TEXT NOT NULL,
                    received_at BIGINT NOT NULL,
                    payload TEXT NOT NULL
                );
                CREATE INDEX notifications_received ON notifications (received_at);
                -- Every new token comes into reporting in the writer's own transaction, whichever instance or
                -- spool replay inserts it: one statement-level trigger per batch, over the rows the batch's
                -- INSERT ... ON CONFLICT actually inserted (merged visits of known tokens are updates).
                CREATE FUNCTION linkout_report_new_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment,
                    token_creation_date, token_type, token_expiration_date)
                SELECT external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                    token_expiration_date
                FROM new_tokens
                ON CONFLICT DO NOTHING;
                    RETURN NULL;
                END $$;
                CREATE TRIGGER tokens_into_reporting AFTER INSERT ON tokens
                    REFERENCING NEW TABLE AS new_tokens FOR EACH STATEMENT EXECUTE FUNCTION linkout_report_new_tokens();
                -- The tokens recorded before this version.
                INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date,
                    token_type, token_expiration_date)
                SELECT external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                    token_expiration_date
                FROM tokens;
                """#),
        // The operator dashboard (issue 15): counts per 5-minute bucket, upserted in each batch's own
        // transaction, and the health checker's up/down changes. Earlier visits are not counted.
        Migration(
            version: 6, summary: "dashboard buckets and destination health",
            sql: #"""
                -- Operator dashboard (issue 15): counts per 5-minute bucket, upserted once per writer batch.
                CREATE TABLE visit_buckets (
                    bucket_start BIGINT NOT NULL,
                    link TEXT COLLATE "C" NOT NULL,
                    kind TEXT COLLATE "C" NOT NULL,
                    country TEXT COLLATE "C" NOT NULL,
                    destination TEXT COLLATE "C" NOT NULL,
                    experiment TEXT COLLATE "C" NOT NULL,
                    variant TEXT COLLATE "C" NOT NULL,
                    visits BIGINT NOT NULL,
                    PRIMARY KEY (bucket_start, link, kind, country, destination, experiment, variant)
                );
                CREATE TABLE refusal_buckets (
                    bucket_start BIGINT NOT NULL,
                    link TEXT COLLATE "C" NOT NULL,
                    reason TEXT COLLATE "C" NOT NULL,
                    refusals BIGINT NOT NULL,
                    PRIMARY KEY (bucket_start, link, reason)
                );
                CREATE TABLE destination_health (
                    target TEXT NOT NULL,
                    up BIGINT NOT NULL,
                    at BIGINT NOT NULL
                );
                CREATE INDEX destination_health_at ON destination_health (at);
                """#),
        // The visits by the hour, filled from the buckets already there, and the line items by arrival.
        Migration(
            version: 7, summary: "dashboard visits by the hour, line items by arrival",
            sql: #"""
                CREATE TABLE visit_hours (
                    bucket_start BIGINT NOT NULL,
                    link TEXT COLLATE "C" NOT NULL,
                    kind TEXT COLLATE "C" NOT NULL,
                    country TEXT COLLATE "C" NOT NULL,
                    destination TEXT COLLATE "C" NOT NULL,
                    experiment TEXT COLLATE "C" NOT NULL,
                    variant TEXT COLLATE "C" NOT NULL,
                    visits BIGINT NOT NULL,
                    PRIMARY KEY (bucket_start, link, kind, country, destination, experiment, variant)
                );
                INSERT INTO visit_hours (bucket_start, link, kind, country, destination, experiment, variant, visits)
                SELECT bucket_start - bucket_start % 3600000, link, kind, country, destination, experiment, variant, sum(visits)
                FROM visit_buckets GROUP BY bucket_start - bucket_start % 3600000, link, kind, country, destination, experiment, variant;
                CREATE INDEX line_items_received ON line_items (received_at);
                """#),
        // The experiments' purchases counted per bucket, filled from the line items already stored, with the
        // triggers that move a token's share when the writer changes its first shopper; the dashboard's last
        // slow counts; the refusals by the hour. 7's arrival index goes: only the experiments' join read by it.
        Migration(
            version: 8, summary: "experiments' purchases per bucket, saved counts, refusals by the hour",
            sql: #"""
                -- No writer may move a first shopper or store a line between the fill and the triggers (neither
                -- would count it), nor a refusal between `refusal_hours`' fill and this migration's end.
                LOCK TABLE tokens, line_items, refusal_buckets IN SHARE ROW EXCLUSIVE MODE;
                DROP INDEX line_items_received;
                CREATE TABLE purchase_buckets (
                    bucket_start BIGINT NOT NULL,
                    link TEXT COLLATE "C" NOT NULL,
                    experiment TEXT COLLATE "C" NOT NULL,
                    variant TEXT COLLATE "C" NOT NULL,
                    -- '' for every purchaser; a reporting currency for those paying in it
                    currency TEXT COLLATE "C" NOT NULL,
                    -- tokens with a line that is not withdrawn (in this currency)
                    tokens BIGINT NOT NULL,
                    -- netAmountTaxExclusive summed, in milli-units (0 on the '' rows)
                    net BIGINT NOT NULL,
                    PRIMARY KEY (bucket_start, link, experiment, variant, currency)
                );
                WITH attributed AS (SELECT external_purchase_id, first_seen AS seen, link, experiment, variant FROM tokens WHERE hits > 0 AND external_purchase_id IN (SELECT external_purchase_id FROM line_items)),
                bought AS (
                    SELECT a.seen - a.seen % 300000 AS bucket_start, a.link AS link,
                        a.experiment AS experiment, coalesce(a.variant, '') AS variant, a.external_purchase_id AS token,
                        (l.body::jsonb ->> 'reportingCurrency') AS currency, ((l.body::jsonb ->> 'netAmountTaxExclusive'))::bigint AS net
                    FROM attributed AS a JOIN line_items AS l ON l.external_purchase_id = a.external_purchase_id
                    WHERE a.experiment IS NOT NULL AND (l.body::jsonb ->> 'erroneouslySubmitted') IS DISTINCT FROM 'true')
                INSERT INTO purchase_buckets (bucket_start, link, experiment, variant, currency, tokens, net)
                SELECT * FROM (
                    SELECT bucket_start, link, experiment, variant, '' AS currency, 1 * count(DISTINCT token) AS tokens,
                        0 AS net
                    FROM bought GROUP BY bucket_start, link, experiment, variant
                    UNION ALL
                    SELECT bucket_start, link, experiment, variant, currency, 1 * count(DISTINCT token), 1 * sum(net)
                    FROM bought WHERE currency IS NOT NULL AND net IS NOT NULL
                    GROUP BY bucket_start, link, experiment, variant, currency) AS delta
                WHERE true ORDER BY bucket_start, link, experiment, variant, currency
                ON CONFLICT (bucket_start, link, experiment, variant, currency) DO UPDATE SET
                    tokens = purchase_buckets.tokens + excluded.tokens, net = purchase_buckets.net + excluded.net;
                CREATE FUNCTION linkout_move_purchases() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    WITH attributed AS (SELECT OLD.external_purchase_id AS external_purchase_id, OLD.first_seen AS seen, OLD.link AS link,
                    OLD.experiment AS experiment, OLD.variant AS variant WHERE OLD.hits > 0),
                bought AS (
                    SELECT a.seen - a.seen % 300000 AS bucket_start, a.link AS link,
                        a.experiment AS experiment, coalesce(a.variant, '') AS variant, a.external_purchase_id AS token,
                        (l.body::jsonb ->> 'reportingCurrency') AS currency, ((l.body::jsonb ->> 'netAmountTaxExclusive'))::bigint AS net
                    FROM attributed AS a JOIN line_items AS l ON l.external_purchase_id = a.external_purchase_id
                    WHERE a.experiment IS NOT NULL AND (l.body::jsonb ->> 'erroneouslySubmitted') IS DISTINCT FROM 'true')
                INSERT INTO purchase_buckets (bucket_start, link, experiment, variant, currency, tokens, net)
                SELECT * FROM (
                    SELECT bucket_start, link, experiment, variant, '' AS currency, -1 * count(DISTINCT token) AS tokens,
                        0 AS net
                    FROM bought GROUP BY bucket_start, link, experiment, variant
                    UNION ALL
                    SELECT bucket_start, link, experiment, variant, currency, -1 * count(DISTINCT token), -1 * sum(net)
                    FROM bought WHERE currency IS NOT NULL AND net IS NOT NULL
                    GROUP BY bucket_start, link, experiment, variant, currency) AS delta
                WHERE true ORDER BY bucket_start, link, experiment, variant, currency
                ON CONFLICT (bucket_start, link, experiment, variant, currency) DO UPDATE SET
                    tokens = purchase_buckets.tokens + excluded.tokens, net = purchase_buckets.net + excluded.net;
                    WITH attributed AS (SELECT NEW.external_purchase_id AS external_purchase_id, NEW.first_seen AS seen, NEW.link AS link,
                    NEW.experiment AS experiment, NEW.variant AS variant WHERE NEW.hits > 0),
                bought AS (
                    SELECT a.seen - a.seen % 300000 AS bucket_start, a.link AS link,
                        a.experiment AS experiment, coalesce(a.variant, '') AS variant, a.external_purchase_id AS token,
                        (l.body::jsonb ->> 'reportingCurrency') AS currency, ((l.body::jsonb ->> 'netAmountTaxExclusive'))::bigint AS net
                    FROM attributed AS a JOIN line_items AS l ON l.external_purchase_id = a.external_purchase_id
                    WHERE a.experiment IS NOT NULL AND (l.body::jsonb ->> 'erroneouslySubmitted') IS DISTINCT FROM 'true')
                INSERT INTO purchase_buckets (bucket_start, link, experiment, variant, currency, tokens, net)
                SELECT * FROM (
                    SELECT bucket_start, link, experiment, variant, '' AS currency, 1 * count(DISTINCT token) AS tokens,
                        0 AS net
                    FROM bought GROUP BY bucket_start, link, experiment, variant
                    UNION ALL
                    SELECT bucket_start, link, experiment, variant, currency, 1 * count(DISTINCT token), 1 * sum(net)
                    FROM bought WHERE currency IS NOT NULL AND net IS NOT NULL
                    GROUP BY bucket_start, link, experiment, variant, currency) AS delta
                WHERE true ORDER BY bucket_start, link, experiment, variant, currency
                ON CONFLICT (bucket_start, link, experiment, variant, currency) DO UPDATE SET
                    tokens = purchase_buckets.tokens + excluded.tokens, net = purchase_buckets.net + excluded.net;
                    RETURN NULL;
                END $$;
                CREATE TRIGGER tokens_purchases_moved AFTER UPDATE ON tokens FOR EACH ROW
                    WHEN ((OLD.hits = 0 AND NEW.hits > 0) OR NEW.first_seen <> OLD.first_seen)
                    EXECUTE FUNCTION linkout_move_purchases();
                CREATE OR REPLACE FUNCTION linkout_report_new_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE
                    inserted bigint;
                BEGIN
                    INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment,
                    token_creation_date, token_type, token_expiration_date)
                SELECT external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                    token_expiration_date
                FROM new_tokens
                ON CONFLICT DO NOTHING;
                    GET DIAGNOSTICS inserted = ROW_COUNT;
                    -- Almost every batch: each new token was new to reporting too, so none has line items yet. Told
                    -- by counting, not by a join whose plan would hang on the statistics of the day.
                    IF inserted < (SELECT count(*) FROM new_tokens) THEN
                        -- Waits for a line-item post holding such a token's row (storeLineItems), so that its lines
                        -- are counted here, or there, never both or neither: it found no tokens row to count them
                        -- under.
                        PERFORM 1 FROM report_tokens AS r JOIN new_tokens AS n ON n.external_purchase_id = r.external_purchase_id
                        WHERE n.hits > 0 AND r.learnt_from <> 'visit' ORDER BY r.external_purchase_id FOR UPDATE OF r;
                        WITH attributed AS (SELECT n.external_purchase_id, n.first_seen AS seen, n.link, n.experiment, n.variant
                FROM new_tokens AS n JOIN report_tokens AS r ON r.external_purchase_id = n.external_purchase_id
                WHERE n.hits > 0 AND r.learnt_from <> 'visit'),
                bought AS (
                    SELECT a.seen - a.seen % 300000 AS bucket_start, a.link AS link,
                        a.experiment AS experiment, coalesce(a.variant, '') AS variant, a.external_purchase_id AS token,
                        (l.body::jsonb ->> 'reportingCurrency') AS currency, ((l.body::jsonb ->> 'netAmountTaxExclusive'))::bigint AS net
                    FROM attributed AS a JOIN line_items AS l ON l.external_purchase_id = a.external_purchase_id
                    WHERE a.experiment IS NOT NULL AND (l.body::jsonb ->> 'erroneouslySubmitted') IS DISTINCT FROM 'true')
                INSERT INTO purchase_buckets (bucket_start, link, experiment, variant, currency, tokens, net)
                SELECT * FROM (
                    SELECT bucket_start, link, experiment, variant, '' AS currency, 1 * count(DISTINCT token) AS tokens,
                        0 AS net
                    FROM bought GROUP BY bucket_start, link, experiment, variant
                    UNION ALL
                    SELECT bucket_start, link, experiment, variant, currency, 1 * count(DISTINCT token), 1 * sum(net)
                    FROM bought WHERE currency IS NOT NULL AND net IS NOT NULL
                    GROUP BY bucket_start, link, experiment, variant, currency) AS delta
                WHERE true ORDER BY bucket_start, link, experiment, variant, currency
                ON CONFLICT (bucket_start, link, experiment, variant, currency) DO UPDATE SET
                    tokens = purchase_buckets.tokens + excluded.tokens, net = purchase_buckets.net + excluded.net;
                    END IF;
                    RETURN NULL;
                END $$;
                CREATE TABLE dashboard_counts (
                    name TEXT PRIMARY KEY,
                    counted_at BIGINT NOT NULL,
                    -- how long the count took, which decides how long it is answered before the next
                    took_ms BIGINT NOT NULL,
                    -- the API's JSON answer
                    body TEXT NOT NULL
                );
                CREATE TABLE refusal_hours (
                    bucket_start BIGINT NOT NULL,
                    link TEXT COLLATE "C" NOT NULL,
                    reason TEXT COLLATE "C" NOT NULL,
                    refusals BIGINT NOT NULL,
                    PRIMARY KEY (bucket_start, link, reason)
                );
                INSERT INTO refusal_hours (bucket_start, link, reason, refusals)
                SELECT bucket_start - bucket_start % 3600000, link, reason, sum(refusals)
                FROM refusal_buckets GROUP BY bucket_start - bucket_start % 3600000, link, reason;
                """#),
        Migration(
            version: 9, summary: "reports' failures apart from their sends, their last send's time and status",
            sql: #"""
                -- 5xx, 429, no answer: what the backoff before the next try counts.
                ALTER TABLE reports ADD COLUMN failures BIGINT NOT NULL DEFAULT 0;
                -- When it was last sent, and Apple's HTTP status then (NULL: no answer): a 401's pause and the
                -- last error are read from these by report status and the dashboard.
                ALTER TABLE reports ADD COLUMN last_attempt_at BIGINT;
                ALTER TABLE reports ADD COLUMN last_status BIGINT;
                """#),
        // PostgreSQL's `tokens` row holds a token's storefront already: only the indexes by month.
        Migration(
            version: 10, summary: "indexes for the monthly statement and month close",
            sql: #"""

                CREATE INDEX report_tokens_created ON report_tokens (token_creation_date);
                CREATE INDEX line_items_created ON line_items (((body::jsonb ->> 'creationDate')::bigint));
                CREATE INDEX untokened_visits_seen ON untokened_visits (seen_at);
                """#),
        Migration(
            version: 11, summary: "payment providers' events, their ids bound to tokens, Paddle's addresses",
            sql: #"""
                -- Every webhook event whose signature verified, once per provider and event id (both deliver at
                -- least once), with the body as signed, to read again when a parked event's binding arrives.
                CREATE TABLE provider_events (
                    provider TEXT COLLATE "C" NOT NULL,
                    event_id TEXT COLLATE "C" NOT NULL,
                    type TEXT COLLATE "C" NOT NULL,
                    object_id TEXT COLLATE "C" NOT NULL,
                    -- The payment's: production or sandbox (Stripe's livemode, Paddle's configured secret).
                    environment TEXT COLLATE "C" NOT NULL,
                    occurred_at BIGINT NOT NULL,
                    received_at BIGINT NOT NULL,
                    -- ProviderOutcome: taken, ignored, unmatched, parked, waiting, held.
                    outcome TEXT COLLATE "C" NOT NULL,
                    external_purchase_id TEXT COLLATE "C",
                    -- What a parked event waits for: a provider's id (sub_…, pi_…, txn_…, add_…), sub_…#start,
                    -- line:<lineItemId> or token:<externalPurchaseId>.
                    waiting_for TEXT COLLATE "C",
                    problem TEXT COLLATE "C",
                    body TEXT COLLATE "C" NOT NULL,
                    PRIMARY KEY (provider, event_id)
                );
                CREATE INDEX provider_events_open ON provider_events (provider, waiting_for) WHERE outcome IN ('parked', 'waiting');
                CREATE INDEX provider_events_received ON provider_events (received_at);
                -- A provider's ids (session, payment intent, subscription, invoice, transaction) bound to the token
                -- their first event named, and the line they made: refunds and renewals carry no metadata.
                CREATE TABLE provider_bindings (
                    provider TEXT COLLATE "C" NOT NULL,
                    object_id TEXT COLLATE "C" NOT NULL,
                    external_purchase_id TEXT COLLATE "C" NOT NULL,
                    line_item_id TEXT COLLATE "C",
                    bound_at BIGINT NOT NULL,
                    PRIMARY KEY (provider, object_id)
                );
                -- Paddle's addresses' countries: its transactions name only address_id.
                CREATE TABLE provider_addresses (
                    provider TEXT COLLATE "C" NOT NULL,
                    address_id TEXT COLLATE "C" NOT NULL,
                    country TEXT COLLATE "C" NOT NULL,
                    updated_at BIGINT NOT NULL,
                    PRIMARY KEY (provider, address_id)
                );
                """#),
        // Version 12: a refused report counts Apple's refusals and may be sent again on its own (RefusalRetry);
        // how far Apple's notification history was read (NotificationHistory);
        // reports Apple refused before it: those of tokens with nothing to correct (NO_LINE_ITEM,
        // UNRECOGNIZED_TOKEN) are due again at once, the LINE_ITEM ones wait for a restatement or `report retry`.
        Migration(
            version: 12, summary: "refused reports sent again on their own, how far Apple's notification history was read",
            sql: #"""
                -- Apple's refusals of the report (400s that are not a duplicate).
                ALTER TABLE reports ADD COLUMN refusals BIGINT NOT NULL DEFAULT 0;
                -- When a refused report is sent again on its own (NULL: only by a restatement or report retry).
                ALTER TABLE reports ADD COLUMN retry_at BIGINT;
                UPDATE reports SET refusals = 1 WHERE state = 'failed';
                UPDATE reports SET retry_at = coalesce(finished_at, created_at) WHERE state = 'failed' AND status <> 'LINE_ITEM';
                CREATE INDEX reports_refused ON reports (finished_at) WHERE state = 'failed';
                -- How far Apple's notification history has been read, per app and environment (NotificationHistory).
                CREATE TABLE notification_history (
                    bundle_id TEXT COLLATE "C" NOT NULL,
                    environment TEXT COLLATE "C" NOT NULL,
                    covered_until BIGINT NOT NULL,
                    checked_at BIGINT NOT NULL,
                    PRIMARY KEY (bundle_id, environment)
                );
                """#),
    ]

    /// The version this build reads and writes.
    static var latestVersion: Int { all.last?.version ?? 0 }
}
