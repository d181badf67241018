import Foundation
import LinkOutCore

/// Reporting's tables, the same in both stores: line items, the tokens still to report and the outbox, each
/// store on a connection of its own, with one set of statements for SQLite and PostgreSQL.
///
/// Tokens come into `report_tokens` off the shoppers' path. In SQLite, from `visits` by a cursor on the
/// visit id (`report_sync`), read by the reporter and the API: the writer keeps appending visits without
/// touching an index on random ids (see SQLiteTokenStore for why that matters). Visit ids grow in commit
/// order, since SQLite has one writer at a time and `visits` is never deleted from, so the cursor misses
/// none. In PostgreSQL, by a trigger on `tokens` in the writer's own transaction (PostgresMigrations): its
/// instances commit concurrently, so no cursor could be trusted there.
///
/// Each side of it its users see (ReportingStore.swift) is an extension of its own, named after it
/// (`SQLReportingStore+Outbox.swift`, ...); the SQL rules of the states they share are in `+States`.
public final class SQLReportingStore {
    /// Internal for the dashboard's queries, which share the connection.
    let database: any ReportingDatabase

    /// Opens a SQLite store file for reporting. The file must exist with the current schema: `serve`
    /// creates and upgrades it.
    public init(sqlitePath path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError("opening \(path)", "no store at this path (start the gateway first, or pass --store)")
        }
        let connection = try SQLiteConnection(path: path, readOnly: false)
        let version = try connection.integer("PRAGMA user_version")
        guard version == SQLiteTokenStore.schemaVersion else {
            let hint = version < SQLiteTokenStore.schemaVersion ? " (start linkout serve on it once to upgrade it)" : ""
            throw StoreError(
                "opening \(path)", "schema version \(version), this linkout reads version \(SQLiteTokenStore.schemaVersion)\(hint)",
                kind: .schemaMismatch)
        }
        database = connection
    }

    /// Opens a PostgreSQL store for reporting; its schema must be current (`linkout store migrate`).
    public init(postgresURL url: String, timeoutMs: Int? = nil) throws {
        let connection = try PostgresConnection(url: url, timeoutMs: timeoutMs)
        try PostgresMigrations.checkVersion(connection)
        database = connection
    }

    private init(database: any ReportingDatabase) {
        self.database = database
    }

    /// For `serve` in spool mode, which starts while PostgreSQL is down (README: Outages): as
    /// `init(postgresURL:timeoutMs:)` when the server answers; when it cannot be reached, a store that
    /// connects (and checks the schema) on first use instead, each call failing as in an outage until then,
    /// so that the reporter, the notification intake and the API start with the shoppers' listener and
    /// work once the server is back. A schema that is not this build's is refused at once, as always.
    /// `unreachable` says why the server could not be reached now (nil when it was).
    public static func connectingWhenReachable(
        postgresURL url: String, timeoutMs: Int?
    ) throws -> (store: SQLReportingStore, unreachable: String?) {
        do {
            return (try SQLReportingStore(postgresURL: url, timeoutMs: timeoutMs), nil)
        } catch let error as StoreError where error.kind != .schemaMismatch {
            return (SQLReportingStore(database: DeferredPostgresConnection(url: url, timeoutMs: timeoutMs)), "\(error)")
        }
    }

    /// The SQLite tables, created by the store's migration to the version that added reporting.
    static let sqliteSchema = """
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
        """

    /// Schema 9 (SQLite) and migration 9 (PostgreSQL): Apple's failures of each report apart from its
    /// sends, and what its last send met. Only Apple's failures lengthen a report's backoff: a lease that
    /// ran out because linkout stopped used to count as one and double the wait (reports reached attempt
    /// 17-20, an hour apart, in a storm of kill -9). Reports waiting to be sent again start counting anew.
    static func schemaNine(postgres: Bool) -> String {
        let integer = SQLColumnTypes(postgres: postgres).integer
        return """
            -- 5xx, 429, no answer: what the backoff before the next try counts.
            ALTER TABLE reports ADD COLUMN failures \(integer) NOT NULL DEFAULT 0;
            -- When it was last sent, and Apple's HTTP status then (NULL: no answer): a 401's pause and the
            -- last error are read from these by report status and the dashboard.
            ALTER TABLE reports ADD COLUMN last_attempt_at \(integer);
            ALTER TABLE reports ADD COLUMN last_status \(integer);
            """
    }

    /// Schema 10 (SQLite) and migration 10 (PostgreSQL): what the monthly statement and month close read.
    /// A token's storefront on SQLite, its first visit's (a registration's country, or a link's), which the
    /// statement takes unless a shopper's visit came (PostgreSQL's `tokens` row holds it already); and
    /// indexes on a token's creation, a line item's date and an untokened visit's time, each read by month.
    static func schemaTen(postgres: Bool) -> String {
        """
        \(postgres ? "" : "ALTER TABLE report_tokens ADD COLUMN country TEXT;")
        CREATE INDEX report_tokens_created ON report_tokens (token_creation_date);
        CREATE INDEX line_items_created ON line_items (\(lineItemCreationDate(postgres: postgres, alias: nil)));
        CREATE INDEX untokened_visits_seen ON untokened_visits (seen_at);
        """
    }

    /// A line item's `creationDate` from its stored body, written as the index of schema 10 is, so that a
    /// query by date uses it.
    static func lineItemCreationDate(postgres: Bool, alias: String?) -> String {
        let body = alias.map { "\($0).body" } ?? "body"
        return postgres ? "((\(body)::jsonb ->> 'creationDate')::bigint)" : "json_extract(\(body), '$.creationDate')"
    }
}

/// What the reporting store refuses.
public enum ReportingStoreError: Error, Equatable, CustomStringConvertible {
    /// Line items for an id linkout never recorded.
    case unknownToken(String)
    /// A lineItemId already used by another token of the same app.
    case lineItemOfAnotherToken(String)

    public var description: String {
        switch self {
        case .unknownToken(let id): "no token \(id) was recorded by linkout"
        case .lineItemOfAnotherToken(let id): "lineItemId \(id) is already used by another token of this app"
        }
    }
}
