/// The SQLite store's schema, as an ordered list of named steps, the way PostgreSQL's is
/// (`PostgresMigrations`): a new store and an old one run the same steps from their version up
/// (`SQLiteTokenStore.migrate`), each in its own transaction.
///
/// **Frozen.** Each step's SQL is the literal text it ran when it was released, byte for byte: a store
/// upgraded by a later build must end as the one that build makes new, and the upgrade tests can only
/// check that if a released step never changes. So no step names a type or constant of the live code (a
/// column list, a table built from a key type, another step's text): changing those must not rewrite
/// history. The literals are raw (`#"""`), so nothing in them can be interpolated. `MigrationHashTests` pins a
/// hash of each released step; a change is a new step at the end, never an edit.
///
/// The `tokens` view is (re)created by the step to version 4 only, the last that changed `visits`, since each
/// version's view names that version's columns; the earlier steps leave a stand-in.
enum SQLiteMigrations {
    /// Version 1 (the first release) kept one merged row per token in a `tokens` table; it goes straight to 2,
    /// as a new store does, by its own step.
    static let fromVersionOne = Migration(
        version: 2, summary: "one visit row per token of version 1's merged tokens table",
        sql: #"""
            CREATE TABLE visits (
                id INTEGER PRIMARY KEY,
                external_purchase_id TEXT NOT NULL,
                app_apple_id INTEGER NOT NULL,
                bundle_id TEXT NOT NULL,
                token_creation_date INTEGER NOT NULL,
                token_type TEXT,
                token_expiration_date INTEGER,
                environment TEXT NOT NULL,
                link TEXT NOT NULL,
                country TEXT NOT NULL,
                destination TEXT NOT NULL,
                first_seen INTEGER NOT NULL,
                last_seen INTEGER NOT NULL,
                hits INTEGER NOT NULL,
                stale INTEGER NOT NULL
            );
            INSERT INTO visits (external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale)
            SELECT external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale
            FROM tokens ORDER BY rowid;
            DROP TABLE tokens;
            CREATE VIEW tokens AS SELECT 1;
            """#)

    static let all: [Migration] = [
        Migration(
            version: 2, summary: "visits and untokened visits",
            sql: #"""
                CREATE TABLE visits (
                    id INTEGER PRIMARY KEY,
                    external_purchase_id TEXT NOT NULL,
                    app_apple_id INTEGER NOT NULL,
                    bundle_id TEXT NOT NULL,
                    token_creation_date INTEGER NOT NULL,
                    token_type TEXT,
                    token_expiration_date INTEGER,
                    environment TEXT NOT NULL,
                    link TEXT NOT NULL,
                    country TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    first_seen INTEGER NOT NULL,
                    last_seen INTEGER NOT NULL,
                    hits INTEGER NOT NULL,
                    stale INTEGER NOT NULL
                );
                CREATE TABLE untokened_visits (
                    id INTEGER PRIMARY KEY,
                    link TEXT NOT NULL,
                    country TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    seen_at INTEGER NOT NULL
                );
                CREATE VIEW tokens AS SELECT 1;
                """#),
        // Version 3: visit kinds (only shoppers' visits are hits) and experiments. Existing visits were
        // all counted as hits, so they are shoppers'.
        Migration(
            version: 3, summary: "visit kinds and experiments",
            sql: #"""
                ALTER TABLE visits ADD COLUMN kind TEXT NOT NULL DEFAULT 'shopper';
                ALTER TABLE visits ADD COLUMN experiment TEXT;
                ALTER TABLE visits ADD COLUMN variant TEXT;
                ALTER TABLE untokened_visits ADD COLUMN kind TEXT NOT NULL DEFAULT 'shopper';
                DROP VIEW tokens;
                CREATE VIEW tokens AS SELECT 1;
                """#),
        // Version 4: exactly-once batches, and the path of unrouted tokens (link `unrouted`).
        // Exactly-once batches: Each writer batch's identity is a row of applied_batches,
        // inserted in the batch's own transaction, and each visit points at its batch's row (an outage
        // spool replays that identity into PostgreSQL). Visits written before have none. The view is the
        // one that merges visits into tokens to this day.
        Migration(
            version: 4, summary: "applied batches (exactly once) and unrouted paths",
            sql: #"""
                CREATE TABLE applied_batches (
                    id INTEGER PRIMARY KEY,
                    instance_id TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    applied_at INTEGER NOT NULL,
                    UNIQUE (instance_id, sequence)
                );
                ALTER TABLE visits ADD COLUMN batch INTEGER;
                ALTER TABLE untokened_visits ADD COLUMN batch INTEGER;
                ALTER TABLE visits ADD COLUMN path TEXT;
                DROP VIEW tokens;
                CREATE VIEW tokens AS
                SELECT v.external_purchase_id, v.app_apple_id, v.bundle_id, v.token_creation_date, v.token_type,
                    v.token_expiration_date, v.environment, v.link, v.country, v.destination,
                    merged.first_seen, merged.last_seen, merged.hits, v.stale, merged.first_visit AS visit_id,
                    merged.other_visits, v.experiment, v.variant, v.path
                FROM (
                    SELECT min(id) AS first_visit,
                        coalesce(min(CASE WHEN kind = 'shopper' THEN id END), min(id)) AS field_visit,
                        min(first_seen) AS first_seen, max(last_seen) AS last_seen, sum(hits) AS hits,
                        sum(CASE WHEN kind = 'shopper' THEN 0 ELSE 1 END) AS other_visits
                    FROM visits GROUP BY external_purchase_id
                ) AS merged
                JOIN visits AS v ON v.id = merged.field_visit;
                """#),
        // Version 5: reporting to Apple (line items, tokens to report, the outbox).
        Migration(
            version: 5, summary: "reporting to Apple",
            sql: #"""
                -- One row per token reporting knows of; its state decides what the reporter sends next.
                CREATE TABLE report_tokens (
                    external_purchase_id TEXT PRIMARY KEY,
                    bundle_id TEXT NOT NULL,
                    app_apple_id INTEGER NOT NULL,
                    environment TEXT NOT NULL,
                    token_creation_date INTEGER NOT NULL,
                    token_type TEXT,
                    token_expiration_date INTEGER,
                    -- 'visit'; 'notification' for a token only Apple's UNREPORTED told of (reported
                    -- UNRECOGNIZED_TOKEN); 'created' for a custom-link token Apple's CREATED or ACTIVE_TOKEN_REMINDER
                    -- told of (minted by the app, so reported like a visit's: NO_LINE_ITEM or LINE_ITEM).
                    learnt_from TEXT NOT NULL DEFAULT 'visit',
                    -- When a line changed that no report carries yet; NULL when there is none.
                    lines_changed_at INTEGER,
                    -- The report on its way to Apple: one per token at a time.
                    open_report TEXT,
                    -- The status Apple accepted for it (LINE_ITEM once any LINE_ITEM was accepted).
                    accepted_status TEXT,
                    -- 1 after Apple refused its last report: nothing more is sent until its lines change.
                    blocked INTEGER NOT NULL DEFAULT 0,
                    -- 1 when it must be reported now, whatever its window (Apple's UNREPORTED notification).
                    due_now INTEGER NOT NULL DEFAULT 0,
                    -- 1 once Apple's UNREPORTED named it before any report of it was accepted: the window or the
                    -- reporter is wrong (counted in report status and the metrics).
                    reminded INTEGER NOT NULL DEFAULT 0
                ) WITHOUT ROWID;
                CREATE INDEX report_tokens_unreported ON report_tokens (token_creation_date) WHERE accepted_status IS NULL;
                CREATE INDEX report_tokens_changed ON report_tokens (lines_changed_at) WHERE lines_changed_at IS NOT NULL;
                -- The checkout's line items, in Apple's shape, one row per lineItemId of an app.
                CREATE TABLE line_items (
                    bundle_id TEXT NOT NULL,
                    line_item_id TEXT NOT NULL,
                    external_purchase_id TEXT NOT NULL,
                    body TEXT NOT NULL,
                    -- 1 when first stored, one more per restatement; accepted_revision is the one Apple holds.
                    revision INTEGER NOT NULL,
                    accepted_revision INTEGER NOT NULL DEFAULT 0,
                    received_at INTEGER NOT NULL,
                    PRIMARY KEY (bundle_id, line_item_id)
                ) WITHOUT ROWID;
                CREATE INDEX line_items_token ON line_items (external_purchase_id);
                -- The outbox: every report made, with its exact body (a retry resends it with the same
                -- requestIdentifier) and Apple's last answer.
                CREATE TABLE reports (
                    request_identifier TEXT PRIMARY KEY,
                    external_purchase_id TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    status TEXT NOT NULL,
                    body TEXT NOT NULL,
                    -- pending, sending (leased until lease_until), accepted or failed.
                    state TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    lease_until INTEGER,
                    created_at INTEGER NOT NULL,
                    finished_at INTEGER,
                    last_answer TEXT
                ) WITHOUT ROWID;
                CREATE INDEX reports_open ON reports (next_attempt_at) WHERE state IN ('pending', 'sending');
                CREATE INDEX reports_token ON reports (external_purchase_id);
                -- Which revision of which line each report carries, to mark them accepted with it.
                CREATE TABLE report_lines (
                    request_identifier TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    line_item_id TEXT NOT NULL,
                    revision INTEGER NOT NULL,
                    PRIMARY KEY (request_identifier, line_item_id)
                ) WITHOUT ROWID;
                -- Every App Store Server Notification that passed verification, once per notificationUUID (Apple
                -- retries with the same one), with what linkout did about it and the payload as Apple signed it.
                CREATE TABLE notifications (
                    uuid TEXT PRIMARY KEY,
                    type TEXT NOT NULL,
                    subtype TEXT,
                    signed_date INTEGER NOT NULL,
                    external_purchase_id TEXT,
                    environment TEXT NOT NULL,
                    -- NotificationOutcome: report_due, already_reported, report_blocked, unrecognized, token_recorded, stored.
                    outcome TEXT NOT NULL,
                    received_at INTEGER NOT NULL,
                    payload TEXT NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX notifications_received ON notifications (received_at);
                -- How far `visits` has been brought into report_tokens.
                CREATE TABLE report_sync (id INTEGER PRIMARY KEY CHECK (id = 1), last_visit_id INTEGER NOT NULL);
                INSERT INTO report_sync (id, last_visit_id) VALUES (1, 0);
                """#),
        // Version 6: the operator dashboard's buckets and health changes (issue 15). Visits committed
        // before it are not counted: the charts start at the upgrade, as the buckets do.
        Migration(
            version: 6, summary: "the dashboard's buckets and health changes",
            sql: #"""
                -- Operator dashboard (issue 15): counts per 5-minute bucket, upserted once per writer batch.
                CREATE TABLE visit_buckets (
                    bucket_start INTEGER NOT NULL,
                    link TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    country TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    experiment TEXT NOT NULL,
                    variant TEXT NOT NULL,
                    visits INTEGER NOT NULL,
                    PRIMARY KEY (bucket_start, link, kind, country, destination, experiment, variant)
                ) WITHOUT ROWID;
                CREATE TABLE refusal_buckets (
                    bucket_start INTEGER NOT NULL,
                    link TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    refusals INTEGER NOT NULL,
                    PRIMARY KEY (bucket_start, link, reason)
                ) WITHOUT ROWID;
                -- One row per up/down change the health checker saw (rare).
                CREATE TABLE destination_health (
                    target TEXT NOT NULL,
                    up INTEGER NOT NULL,
                    at INTEGER NOT NULL
                );
                CREATE INDEX destination_health_at ON destination_health (at);
                """#),
        // Version 7: each token's first shopper's visit in `report_tokens`, for the experiments'
        // purchases, and the visits by the hour. The first shoppers of the visits brought into reporting
        // before it (up to `shoppers_until`) are read again by the reporter's rounds, a chunk at a time, not
        // here: one pass over ten million visits would hold up the start for minutes.
        Migration(
            version: 7, summary: "first shoppers in reporting, visits by the hour",
            sql: #"""
                ALTER TABLE report_tokens ADD COLUMN shopper_visit INTEGER;
                ALTER TABLE report_tokens ADD COLUMN shopper_seen INTEGER;
                ALTER TABLE report_tokens ADD COLUMN shopper_link TEXT;
                ALTER TABLE report_tokens ADD COLUMN experiment TEXT;
                ALTER TABLE report_tokens ADD COLUMN variant TEXT;
                ALTER TABLE report_sync ADD COLUMN shoppers_from INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE report_sync ADD COLUMN shoppers_until INTEGER NOT NULL DEFAULT 0;
                UPDATE report_sync SET shoppers_until = last_visit_id;
                CREATE TABLE visit_hours (
                    bucket_start INTEGER NOT NULL,
                    link TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    country TEXT NOT NULL,
                    destination TEXT NOT NULL,
                    experiment TEXT NOT NULL,
                    variant TEXT NOT NULL,
                    visits INTEGER NOT NULL,
                    PRIMARY KEY (bucket_start, link, kind, country, destination, experiment, variant)
                ) WITHOUT ROWID;
                INSERT INTO visit_hours (bucket_start, link, kind, country, destination, experiment, variant, visits)
                SELECT bucket_start - bucket_start % 3600000, link, kind, country, destination, experiment, variant, sum(visits)
                FROM visit_buckets GROUP BY bucket_start - bucket_start % 3600000, link, kind, country, destination, experiment, variant;
                CREATE INDEX line_items_received ON line_items (received_at);
                """#),
        // Version 8: the experiments' purchases counted per bucket as line items are stored, filled from the
        // line items already there, the dashboard's last slow counts kept, and the refusals by the hour. The
        // line items' arrival index of 7 goes: only the experiments' join read by it.
        Migration(
            version: 8, summary: "purchases per bucket, saved counts, refusals by the hour",
            sql: #"""
                DROP INDEX line_items_received;
                CREATE TABLE purchase_buckets (
                    bucket_start INTEGER NOT NULL,
                    link TEXT NOT NULL,
                    experiment TEXT NOT NULL,
                    variant TEXT NOT NULL,
                    -- '' for every purchaser; a reporting currency for those paying in it
                    currency TEXT NOT NULL,
                    -- tokens with a line that is not withdrawn (in this currency)
                    tokens INTEGER NOT NULL,
                    -- netAmountTaxExclusive summed, in milli-units (0 on the '' rows)
                    net INTEGER NOT NULL,
                    PRIMARY KEY (bucket_start, link, experiment, variant, currency)
                ) WITHOUT ROWID;
                WITH attributed AS (SELECT external_purchase_id, shopper_seen AS seen, shopper_link AS link, experiment, variant FROM report_tokens WHERE true AND external_purchase_id IN (SELECT external_purchase_id FROM line_items)),
                bought AS (
                    SELECT a.seen - a.seen % 300000 AS bucket_start, a.link AS link,
                        a.experiment AS experiment, coalesce(a.variant, '') AS variant, a.external_purchase_id AS token,
                        json_extract(l.body, '$.reportingCurrency') AS currency, json_extract(l.body, '$.netAmountTaxExclusive') AS net
                    FROM attributed AS a JOIN line_items AS l ON l.external_purchase_id = a.external_purchase_id
                    WHERE a.experiment IS NOT NULL AND json_extract(l.body, '$.erroneouslySubmitted') IS NOT 1)
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
                CREATE TABLE dashboard_counts (
                    name TEXT PRIMARY KEY,
                    counted_at INTEGER NOT NULL,
                    -- how long the count took, which decides how long it is answered before the next
                    took_ms INTEGER NOT NULL,
                    -- the API's JSON answer
                    body TEXT NOT NULL
                );
                CREATE TABLE refusal_hours (
                    bucket_start INTEGER NOT NULL,
                    link TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    refusals INTEGER NOT NULL,
                    PRIMARY KEY (bucket_start, link, reason)
                ) WITHOUT ROWID;
                INSERT INTO refusal_hours (bucket_start, link, reason, refusals)
                SELECT bucket_start - bucket_start % 3600000, link, reason, sum(refusals)
                FROM refusal_buckets GROUP BY bucket_start - bucket_start % 3600000, link, reason;
                """#),
        // Version 9: reports count Apple's failures apart from their sends, and keep their last send's
        // time and status (the backoff, and why a report waits, in report status).
        Migration(
            version: 9, summary: "reports' failures apart from their sends, their last send's time and status",
            sql: #"""
                -- 5xx, 429, no answer: what the backoff before the next try counts.
                ALTER TABLE reports ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
                -- When it was last sent, and Apple's HTTP status then (NULL: no answer): a 401's pause and the
                -- last error are read from these by report status and the dashboard.
                ALTER TABLE reports ADD COLUMN last_attempt_at INTEGER;
                ALTER TABLE reports ADD COLUMN last_status INTEGER;
                """#),
        // Version 10: the monthly statement's and month close's reads (a token's storefront, indexes by
        // month).
        Migration(
            version: 10, summary: "a token's storefront, indexes by month for the statement",
            sql: #"""
                ALTER TABLE report_tokens ADD COLUMN country TEXT;
                CREATE INDEX report_tokens_created ON report_tokens (token_creation_date);
                CREATE INDEX line_items_created ON line_items (json_extract(body, '$.creationDate'));
                CREATE INDEX untokened_visits_seen ON untokened_visits (seen_at);
                """#),
        // Version 11: the payment providers' webhook events, their ids bound to tokens, Paddle's addresses.
        Migration(
            version: 11, summary: "payment providers' events, bindings and addresses",
            sql: #"""
                -- Every webhook event whose signature verified, once per provider and event id (both deliver at
                -- least once), with the body as signed, to read again when a parked event's binding arrives.
                CREATE TABLE provider_events (
                    provider TEXT NOT NULL,
                    event_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    object_id TEXT NOT NULL,
                    -- The payment's: production or sandbox (Stripe's livemode, Paddle's configured secret).
                    environment TEXT NOT NULL,
                    occurred_at INTEGER NOT NULL,
                    received_at INTEGER NOT NULL,
                    -- ProviderOutcome: taken, ignored, unmatched, parked, waiting, held.
                    outcome TEXT NOT NULL,
                    external_purchase_id TEXT,
                    -- What a parked event waits for: a provider's id (sub_…, pi_…, txn_…, add_…), sub_…#start,
                    -- line:<lineItemId> or token:<externalPurchaseId>.
                    waiting_for TEXT,
                    problem TEXT,
                    body TEXT NOT NULL,
                    PRIMARY KEY (provider, event_id)
                ) WITHOUT ROWID;
                CREATE INDEX provider_events_open ON provider_events (provider, waiting_for) WHERE outcome IN ('parked', 'waiting');
                CREATE INDEX provider_events_received ON provider_events (received_at);
                -- A provider's ids (session, payment intent, subscription, invoice, transaction) bound to the token
                -- their first event named, and the line they made: refunds and renewals carry no metadata.
                CREATE TABLE provider_bindings (
                    provider TEXT NOT NULL,
                    object_id TEXT NOT NULL,
                    external_purchase_id TEXT NOT NULL,
                    line_item_id TEXT,
                    bound_at INTEGER NOT NULL,
                    PRIMARY KEY (provider, object_id)
                ) WITHOUT ROWID;
                -- Paddle's addresses' countries: its transactions name only address_id.
                CREATE TABLE provider_addresses (
                    provider TEXT NOT NULL,
                    address_id TEXT NOT NULL,
                    country TEXT NOT NULL,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (provider, address_id)
                ) WITHOUT ROWID;
                """#),
        // Version 12: a refused report counts Apple's refusals and may be sent again on its own (RefusalRetry);
        // how far Apple's notification history was read (NotificationHistory);
        // reports Apple refused before it: those of tokens with nothing to correct (NO_LINE_ITEM,
        // UNRECOGNIZED_TOKEN) are due again at once, the LINE_ITEM ones wait for a restatement or `report retry`.
        Migration(
            version: 12, summary: "refused reports sent again on their own, how far Apple's notification history was read",
            sql: #"""
                -- Apple's refusals of the report (400s that are not a duplicate).
                ALTER TABLE reports ADD COLUMN refusals INTEGER NOT NULL DEFAULT 0;
                -- When a refused report is sent again on its own (NULL: only by a restatement or report retry).
                ALTER TABLE reports ADD COLUMN retry_at INTEGER;
                UPDATE reports SET refusals = 1 WHERE state = 'failed';
                UPDATE reports SET retry_at = coalesce(finished_at, created_at) WHERE state = 'failed' AND status <> 'LINE_ITEM';
                CREATE INDEX reports_refused ON reports (finished_at) WHERE state = 'failed';
                -- How far Apple's notification history has been read, per app and environment (NotificationHistory).
                CREATE TABLE notification_history (
                    bundle_id TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    covered_until INTEGER NOT NULL,
                    checked_at INTEGER NOT NULL,
                    PRIMARY KEY (bundle_id, environment)
                ) WITHOUT ROWID;
                """#),
    ]

    static var latestVersion: Int { all.last?.version ?? 0 }

    /// The steps a store at `version` takes to reach `last`.
    static func steps(from version: Int, upTo last: Int) -> [Migration] {
        let later = all.filter { $0.version > max(version, 2) && $0.version <= last }
        switch version {
        case 0: return all.filter { $0.version <= last }
        case 1: return (last >= 2 ? [fromVersionOne] : []) + later
        default: return later
        }
    }
}
