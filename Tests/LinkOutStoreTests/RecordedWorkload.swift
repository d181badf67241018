import Foundation
import LinkOutCore

@testable import LinkOutStore

/// What an earlier linkout left in its store, for `UpgradeWithDataTests`: its writer's visits and batches,
/// its reporter's sync and outbox, its line-item and notification intakes' rows, the dashboard's counts and
/// the providers' ledger, written with the SQL of that version (only the tables and columns it had) into a
/// store made by running only its migration steps. One workload, told as each recorded version would have
/// left it, and what this build must read back from it.
///
/// Versions recorded: 4 (before reporting: every token must come into reporting on the upgrade), 5 (the
/// first with reporting) and 11 (the last before this build's 12). When a step is added, record the
/// version before it here.
///
/// Tokens, all created in September 2025, an hour apart:
///  1. bought: a shopper's visit in an experiment, a bot's, the shopper again; a line item Apple accepted
///     in a LINE_ITEM report (made from a Stripe payment, version 11).
///  2. quiet: a stale token, a NO_LINE_ITEM report accepted.
///  3. pending: a NO_LINE_ITEM report sent once, Apple answered 503, waiting to be sent again; Apple's
///     UNREPORTED named it (reminded).
///  4. changed: a HEAD from another country first, then the shopper; a line item restated, not reported yet.
///  5. refused: a NO_LINE_ITEM report Apple refused (before version 12, which counts refusals).
///  6. prefetched: only a prefetch came: no hit.
///  7. unrouted: a token on a path no link serves.
///  8. registered (version 10 on): handed over by the app's backend, with a type and an expiry.
///  9. sandbox: a sandbox token whose visit the reporter had not brought into reporting yet (SQLite).
/// 10. unknown: only Apple's UNREPORTED told of it (reported UNRECOGNIZED_TOKEN).
/// 11. custom: a custom link's token only Apple's CREATED told of.
enum RecordedWorkload {
    static let versions = [4, 5, 11]

    static let hour: Int64 = 3_600_000
    static let day = 24 * hour
    /// 2025-09-02 08:00 UTC.
    static let start: Int64 = 1_756_800_000_000
    /// 2025-09-16 05:20 UTC: every token is past the no-purchase window and Apple's day 10.
    static let now: Int64 = 1_758_000_000_000
    static let window = 72 * hour
    static let month = UTCMonth("2025-09")!
    static let bundleId = "com.example"
    static let appAppleId: Int64 = 1_234_567_890

    static func id(_ n: Int) -> String { String(format: "%08d-0000-4000-8000-%012d", n, n) }
    static func created(_ n: Int) -> Int64 { start + Int64(n) * hour }
    static func seen(_ n: Int) -> Int64 { created(n) + 600_000 }

    static let bought = id(1), quiet = id(2), pending = id(3), changed = id(4), refused = id(5), prefetched = id(6)
    static let unrouted = id(7), registered = id(8), sandbox = "SANDBOX_" + id(9), unknown = id(10), custom = id(11)
    static let registeredExpires = created(8) + 30 * day
    static let customExpires = created(11) + 30 * day
    /// When the changed token's line was restated; when each report was made and answered.
    static let linesChangedAt = created(4) + 2 * hour
    static let boughtReportAt = created(1) + 2 * hour
    static let quietReportAt = created(2) + window
    static let pendingReportAt = created(3) + window
    static let refusedReportAt = created(5) + window
    /// When the pending report is due again (before `now`).
    static let pendingNextAttempt = now - 60_000

    /// A line item's JSON as the intake stored it.
    static func line(_ lineItemId: String, createdAt: Int64, net: Int64) -> String {
        #"{"lineItemId":"\#(lineItemId)","creationDate":\#(createdAt),"eventType":"BUY","productType":"ONE_TIME_BUY","productIdentifier":"p","quantity":1,"pricingCurrency":"EUR","reportingCurrency":"EUR","amountTaxExclusive":\#(net),"amountTaxInclusive":\#(net + net / 5),"netAmountTaxExclusive":\#(net),"taxAmount":\#(net / 5),"taxCountry":"NLD"}"#
    }

    static let boughtLine = line("stripe:pi_1", createdAt: created(1) + hour, net: 2470)
    static let changedLine = line("order-4", createdAt: created(4) + hour, net: 990)

    /// A report's body as the reporter made it.
    static func body(_ request: String, _ token: String, _ status: String) -> String {
        #"{"requestIdentifier":"\#(request)","externalPurchaseId":"\#(token)","status":"\#(status)"}"#
    }

    // MARK: The SQL each version wrote

    /// The visits and untokened visits, in SQLite's `visits` (one row per visit) as the writer committed them.
    static func sqliteVisits(version: Int) -> String {
        let registeredVisit =
            version >= 10
            ? """
            (11, '\(registered)', \(appAppleId), '\(bundleId)', \(created(8)), 'SERVICES', \(registeredExpires), 'production', 'registered', 'jp', '', \(seen(8)), \(seen(8)), 0, 0, 'registered', NULL, NULL, 3, NULL),
            """ : ""
        return """
            -- The writer's three batches (exactly once, version 4).
            INSERT INTO applied_batches (id, instance_id, sequence, applied_at) VALUES
                (1, 'instance-a', 1, \(seen(1) + 60_001)), (2, 'instance-a', 2, \(seen(7) + 1)), (3, 'instance-b', 1, \(seen(9) + 1));
            INSERT INTO visits (id, external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type,
                token_expiration_date, environment, link, country, destination, first_seen, last_seen, hits, stale,
                kind, experiment, variant, batch, path)
            VALUES
                (1, '\(bought)', \(appAppleId), '\(bundleId)', \(created(1)), NULL, NULL, 'production', 'nl', 'nl', 'https://nl.example/', \(seen(1)), \(seen(1)), 1, 0, 'shopper', 'price', 'a', 1, NULL),
                (2, '\(bought)', \(appAppleId), '\(bundleId)', \(created(1)), NULL, NULL, 'production', 'nl', 'nl', 'https://nl.example/', \(seen(1) + 1_000), \(seen(1) + 1_000), 0, 0, 'bot', 'price', 'a', 1, NULL),
                (3, '\(bought)', \(appAppleId), '\(bundleId)', \(created(1)), NULL, NULL, 'production', 'nl', 'nl', 'https://nl.example/', \(seen(1) + 60_000), \(seen(1) + 60_000), 1, 0, 'shopper', 'price', 'a', 1, NULL),
                (4, '\(quiet)', \(appAppleId), '\(bundleId)', \(created(2)), NULL, NULL, 'production', 'nl', 'be', 'https://be.example/', \(seen(2)), \(seen(2)), 1, 1, 'shopper', NULL, NULL, 2, NULL),
                (5, '\(pending)', \(appAppleId), '\(bundleId)', \(created(3)), NULL, NULL, 'production', 'nl', 'nl', 'https://nl.example/', \(seen(3)), \(seen(3)), 1, 0, 'shopper', 'price', 'b', 2, NULL),
                (6, '\(changed)', \(appAppleId), '\(bundleId)', \(created(4)), NULL, NULL, 'production', 'nl', 'de', 'https://de.example/', \(seen(4) - 5_000), \(seen(4) - 5_000), 0, 0, 'head', NULL, NULL, 2, NULL),
                (7, '\(changed)', \(appAppleId), '\(bundleId)', \(created(4)), NULL, NULL, 'production', 'nl', 'nl', 'https://nl.example/', \(seen(4)), \(seen(4)), 1, 0, 'shopper', NULL, NULL, 2, NULL),
                (8, '\(refused)', \(appAppleId), '\(bundleId)', \(created(5)), NULL, NULL, 'production', 'nl', 'nl', 'https://nl.example/', \(seen(5)), \(seen(5)), 1, 0, 'shopper', NULL, NULL, 2, NULL),
                (9, '\(prefetched)', \(appAppleId), '\(bundleId)', \(created(6)), NULL, NULL, 'production', 'nl', 'nl', 'https://nl.example/', \(seen(6)), \(seen(6)), 0, 0, 'prefetch', NULL, NULL, 2, NULL),
                (10, '\(unrouted)', \(appAppleId), '\(bundleId)', \(created(7)), NULL, NULL, 'production', 'unrouted', '', '', \(seen(7)), \(seen(7)), 1, 0, 'shopper', NULL, NULL, 2, '/nl/'),
                \(registeredVisit)
                (12, '\(sandbox)', \(appAppleId), '\(bundleId)', \(created(9)), NULL, NULL, 'sandbox', 'nl', 'nl', 'https://nl.example/', \(seen(9)), \(seen(9)), 1, 0, 'shopper', NULL, NULL, 3, NULL);
            INSERT INTO untokened_visits (id, link, country, destination, reason, seen_at, kind, batch) VALUES
                \(untokenedRows.enumerated().map { "(\($0.offset + 1), \($0.element), \($0.offset < 2 ? 1 : 2))" }.joined(separator: ",\n    "));
            """
    }

    /// Taps of a link that expects no token (a shopper's and a bot's in the Netherlands, a shopper's in
    /// Belgium) and a refused token sent on: `link, country, destination, reason, seen_at, kind`.
    static let untokenedRows = [
        "'free', 'nl', 'https://free.example/', 'tap', \(start + 2 * hour + 1), 'shopper'",
        "'free', 'nl', 'https://free.example/', 'tap', \(start + 2 * hour + 2), 'bot'",
        "'free', 'be', 'https://free.example/', 'tap', \(start + 5 * hour), 'shopper'",
        "'nl', 'nl', 'https://nl.example/', 'token_not_base64', \(start + 3 * hour), 'shopper'",
    ]

    /// The same visits in PostgreSQL's `tokens`, merged by the writer's upsert (the fields of the first
    /// shopper's visit; times, hits and other visits over all), with the batches and a spool's replay.
    static func postgresVisits(version: Int) -> String {
        let columns = """
            external_purchase_id, app_apple_id, bundle_id, token_creation_date, token_type, token_expiration_date,
                environment, link, country, destination, first_seen, last_seen, hits, stale, other_visits, experiment, variant, path
            """
        func row(
            _ n: Int, _ id: String, environment: String = "production", link: String = "nl", country: String = "nl",
            destination: String = "https://nl.example/", firstSeen: Int64? = nil, lastSeen: Int64? = nil, hits: Int = 1,
            stale: Bool = false, other: Int = 0, experiment: String = "NULL", variant: String = "NULL", path: String = "NULL",
            type: String = "NULL", expires: String = "NULL"
        ) -> String {
            "('\(id)', \(appAppleId), '\(bundleId)', \(created(n)), \(type), \(expires), '\(environment)', '\(link)', '\(country)', "
                + "'\(destination)', \(firstSeen ?? seen(n)), \(lastSeen ?? seen(n)), \(hits), \(stale), \(other), \(experiment), \(variant), \(path))"
        }
        var rows = [
            row(1, bought, lastSeen: seen(1) + 60_000, hits: 2, other: 1, experiment: "'price'", variant: "'a'"),
            row(2, quiet, country: "be", destination: "https://be.example/", stale: true),
            row(3, pending, experiment: "'price'", variant: "'b'"),
            row(4, changed, firstSeen: seen(4) - 5_000, other: 1),
            row(5, refused),
            row(6, prefetched, hits: 0, other: 1),
            row(7, unrouted, link: "unrouted", country: "", destination: "", path: "'/nl/'"),
        ]
        if version >= 10 {
            rows.append(
                row(
                    8, registered, link: "registered", country: "jp", destination: "", hits: 0, other: 1,
                    type: "'SERVICES'", expires: "\(registeredExpires)"))
        }
        rows.append(row(9, sandbox, environment: "sandbox"))
        return """
            INSERT INTO applied_batches (instance_id, sequence, via_spool, applied_at) VALUES
                ('instance-a', 1, false, '2025-09-02 09:11:00+00'), ('instance-a', 2, false, '2025-09-02 15:10:00+00'),
                ('instance-b', 1, true, '2025-09-02 17:10:00+00');
            INSERT INTO spool_replays (stream, last_rowid, updated_at) VALUES ('instance-b:visits', 2, '2025-09-02 17:10:00+00');
            INSERT INTO tokens (\(columns))
            VALUES
                \(rows.joined(separator: ",\n    "));
            INSERT INTO untokened_visits (link, country, destination, reason, seen_at, kind) VALUES
                \(untokenedRows.map { "(\($0))" }.joined(separator: ",\n    "));
            """
    }

    /// SQLite's reporter bringing visits 1 to 11 into reporting (visit 12, the sandbox token's, came after
    /// its last sync), with the sync of the version: 5's took the tokens only; 7's on (as 11's) their
    /// first shoppers too, and 10's on their storefronts.
    static func sqliteSync(version: Int) -> String {
        if version < 7 {
            return """
                INSERT OR IGNORE INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment,
                    token_creation_date, token_type, token_expiration_date)
                SELECT external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                    token_expiration_date
                FROM visits WHERE id > 0 AND id <= 11 ORDER BY id;
                UPDATE report_sync SET last_visit_id = 11;
                """
        }
        precondition(version >= 10, "no workload recorded for version \(version)")
        let firstShopper =
            "(excluded.shopper_visit IS NOT NULL AND (report_tokens.shopper_visit IS NULL OR excluded.shopper_visit < report_tokens.shopper_visit))"
        return """
            INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment,
                token_creation_date, token_type, token_expiration_date, shopper_visit, shopper_seen, shopper_link,
                experiment, variant, country)
            SELECT external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                token_expiration_date, CASE WHEN kind = 'shopper' THEN id END, CASE WHEN kind = 'shopper' THEN first_seen END,
                CASE WHEN kind = 'shopper' THEN link END, CASE WHEN kind = 'shopper' THEN experiment END,
                CASE WHEN kind = 'shopper' THEN variant END, nullif(country, '')
            FROM visits WHERE id > 0 AND id <= 11 ORDER BY id
            ON CONFLICT (external_purchase_id) DO UPDATE SET
                shopper_visit = CASE WHEN \(firstShopper) THEN excluded.shopper_visit ELSE report_tokens.shopper_visit END,
                shopper_seen = CASE WHEN \(firstShopper) THEN excluded.shopper_seen ELSE report_tokens.shopper_seen END,
                shopper_link = CASE WHEN \(firstShopper) THEN excluded.shopper_link ELSE report_tokens.shopper_link END,
                experiment = CASE WHEN \(firstShopper) THEN excluded.experiment ELSE report_tokens.experiment END,
                variant = CASE WHEN \(firstShopper) THEN excluded.variant ELSE report_tokens.variant END,
                country = coalesce(report_tokens.country, excluded.country)
            WHERE \(firstShopper) OR (report_tokens.country IS NULL AND excluded.country IS NOT NULL);
            UPDATE report_sync SET last_visit_id = 11;
            """
    }

    /// Reporting's rows, the same SQL on both stores (version 5 on): the tokens Apple's notifications told
    /// of, the line items, the outbox as the reporter left it, the notifications kept.
    static func reporting(version: Int) -> String {
        var sql = """
            INSERT INTO report_tokens (external_purchase_id, bundle_id, app_apple_id, environment, token_creation_date, token_type,
                token_expiration_date, learnt_from, due_now)
            VALUES ('\(unknown)', '\(bundleId)', \(appAppleId), 'production', \(created(10)), NULL, NULL, 'notification', 1),
                ('\(custom)', '\(bundleId)', \(appAppleId), 'production', \(created(11)), 'ACQUISITION', \(customExpires), 'created', 0);
            INSERT INTO line_items (bundle_id, line_item_id, external_purchase_id, body, revision, accepted_revision, received_at) VALUES
                ('\(bundleId)', 'stripe:pi_1', '\(bought)', '\(boughtLine)', 1, 1, \(created(1) + hour + 5)),
                ('\(bundleId)', 'order-4', '\(changed)', '\(changedLine)', 2, 0, \(linesChangedAt));
            INSERT INTO reports (request_identifier, external_purchase_id, bundle_id, environment, status, body, state, attempts,
                next_attempt_at, lease_until, created_at, finished_at, last_answer)
            VALUES
                ('req-bought', '\(bought)', '\(bundleId)', 'production', 'LINE_ITEM', '\(body("req-bought", bought, "LINE_ITEM"))', 'accepted', 1,
                    \(boughtReportAt), NULL, \(boughtReportAt), \(boughtReportAt + 500), 'HTTP 200'),
                ('req-quiet', '\(quiet)', '\(bundleId)', 'production', 'NO_LINE_ITEM', '\(body("req-quiet", quiet, "NO_LINE_ITEM"))', 'accepted', 1,
                    \(quietReportAt), NULL, \(quietReportAt), \(quietReportAt + 400), 'HTTP 200'),
                ('req-pending', '\(pending)', '\(bundleId)', 'production', 'NO_LINE_ITEM', '\(body("req-pending", pending, "NO_LINE_ITEM"))', 'pending', 1,
                    \(pendingNextAttempt), NULL, \(pendingReportAt), NULL, 'HTTP 503 '),
                ('req-refused', '\(refused)', '\(bundleId)', 'production', 'NO_LINE_ITEM', '\(body("req-refused", refused, "NO_LINE_ITEM"))', 'failed', 1,
                    \(refusedReportAt), NULL, \(refusedReportAt), \(refusedReportAt + 300), 'HTTP 400 {"errorCode":4000027}');
            INSERT INTO report_lines (request_identifier, bundle_id, line_item_id, revision) VALUES ('req-bought', '\(bundleId)', 'stripe:pi_1', 1);
            UPDATE report_tokens SET accepted_status = 'LINE_ITEM' WHERE external_purchase_id = '\(bought)';
            UPDATE report_tokens SET accepted_status = 'NO_LINE_ITEM' WHERE external_purchase_id = '\(quiet)';
            UPDATE report_tokens SET open_report = 'req-pending', due_now = 1, reminded = 1 WHERE external_purchase_id = '\(pending)';
            UPDATE report_tokens SET lines_changed_at = \(linesChangedAt) WHERE external_purchase_id = '\(changed)';
            UPDATE report_tokens SET blocked = 1 WHERE external_purchase_id = '\(refused)';
            INSERT INTO notifications (uuid, type, subtype, signed_date, external_purchase_id, environment, outcome, received_at, payload)
            VALUES
                ('n-test', 'TEST', NULL, \(start), NULL, 'production', 'stored', \(start + 1), '{"notificationType":"TEST"}'),
                ('n-unreported-3', 'EXTERNAL_PURCHASE_TOKEN', 'UNREPORTED', \(created(3) + 10 * day), '\(pending)', 'production', 'report_due',
                    \(created(3) + 10 * day + 1), '{"subtype":"UNREPORTED"}'),
                ('n-unreported-10', 'EXTERNAL_PURCHASE_TOKEN', 'UNREPORTED', \(created(10) + 10 * day), '\(unknown)', 'production', 'unrecognized',
                    \(created(10) + 10 * day + 1), '{"subtype":"UNREPORTED"}'),
                ('n-created-11', 'EXTERNAL_PURCHASE_TOKEN', 'CREATED', \(created(11)), '\(custom)', 'production', 'token_recorded',
                    \(created(11) + 1), '{"subtype":"CREATED"}');
            """
        if version >= 9 {
            sql += """

                -- Version 9: Apple's failures apart from the sends, and each report's last send.
                UPDATE reports SET failures = 1, last_attempt_at = \(pendingReportAt + 100), last_status = 503 WHERE request_identifier = 'req-pending';
                UPDATE reports SET last_attempt_at = finished_at WHERE state IN ('accepted', 'failed');
                """
        }
        return sql
    }

    /// The dashboard's tables (version 6 on, the hours 7 on, the tally and saved counts 8 on), the same SQL
    /// on both stores: the bought token's visits and purchase, a refusal, a destination down and up again.
    static func dashboard(version: Int) -> String {
        let bucket = seen(1) - seen(1) % 300_000
        var sql = """
            INSERT INTO visit_buckets (bucket_start, link, kind, country, destination, experiment, variant, visits) VALUES
                (\(bucket), 'nl', 'shopper', 'nl', 'https://nl.example/', 'price', 'a', 2),
                (\(bucket), 'nl', 'bot', 'nl', 'https://nl.example/', 'price', 'a', 1);
            INSERT INTO refusal_buckets (bucket_start, link, reason, refusals) VALUES (\(start + 3 * hour), 'nl', 'token_not_base64', 1);
            INSERT INTO destination_health (target, up, at) VALUES ('https://nl.example/', 0, \(start + 4 * hour)),
                ('https://nl.example/', 1, \(start + 4 * hour + 60_000));
            """
        if version >= 7 {
            sql += """

                INSERT INTO visit_hours (bucket_start, link, kind, country, destination, experiment, variant, visits) VALUES
                    (\(bucket - bucket % hour), 'nl', 'shopper', 'nl', 'https://nl.example/', 'price', 'a', 2),
                    (\(bucket - bucket % hour), 'nl', 'bot', 'nl', 'https://nl.example/', 'price', 'a', 1);
                """
        }
        if version >= 8 {
            sql += """

                INSERT INTO refusal_hours (bucket_start, link, reason, refusals) VALUES (\(start + 3 * hour), 'nl', 'token_not_base64', 1);
                INSERT INTO purchase_buckets (bucket_start, link, experiment, variant, currency, tokens, net) VALUES
                    (\(bucket), 'nl', 'price', 'a', '', 1, 0), (\(bucket), 'nl', 'price', 'a', 'EUR', 1, 2470);
                INSERT INTO dashboard_counts (name, counted_at, took_ms, body) VALUES ('\(savedCountName)', \(savedCount.countedAt), \(savedCount.tookMs), '\(savedCount.body)');
                """
        }
        return sql
    }

    static let savedCountName = "report_states"
    static let savedCount = DashboardStore.SavedCount(countedAt: now - 1_000, tookMs: 12, body: #"{"rows":[]}"#)

    /// The providers' ledger (version 11): the Stripe payment that made the bought token's line, a Paddle
    /// event parked waiting for its address, a test payment held, an address's country.
    static let providers = """
        INSERT INTO provider_events (provider, event_id, type, object_id, environment, occurred_at, received_at, outcome,
            external_purchase_id, waiting_for, problem, body)
        VALUES
            ('stripe', 'evt_1', 'checkout.session.completed', 'cs_1', 'production', \(created(1) + hour - 10), \(created(1) + hour), 'taken',
                '\(bought)', NULL, NULL, '{"id":"evt_1"}'),
            ('paddle', 'evt_2', 'transaction.completed', 'txn_2', 'production', \(created(4) + hour), \(created(4) + hour + 1), 'parked',
                NULL, 'add_9', NULL, '{"id":"evt_2"}'),
            ('stripe', 'evt_3', 'charge.refunded', 'ch_3', 'sandbox', \(created(5)), \(created(5) + 1), 'held',
                '\(refused)', NULL, 'a test payment for a production token', '{"id":"evt_3"}');
        INSERT INTO provider_bindings (provider, object_id, external_purchase_id, line_item_id, bound_at) VALUES
            ('stripe', 'cs_1', '\(bought)', 'stripe:pi_1', \(created(1) + hour)),
            ('stripe', 'pi_1', '\(bought)', 'stripe:pi_1', \(created(1) + hour));
        INSERT INTO provider_addresses (provider, address_id, country, updated_at) VALUES ('paddle', 'add_1', 'NL', \(created(4)));
        """

    /// Everything a SQLite store at `version` held.
    static func sqlite(version: Int) -> String {
        precondition(versions.contains(version), "no workload recorded for version \(version)")
        var parts = [sqliteVisits(version: version)]
        if version >= 5 { parts += [sqliteSync(version: version), reporting(version: version)] }
        if version >= 6 { parts.append(dashboard(version: version)) }
        if version >= 11 { parts.append(providers) }
        return parts.joined(separator: "\n")
    }

    /// Everything a PostgreSQL database at `version` held. From version 5 the insert into `tokens` brought
    /// the visits' tokens into reporting by its trigger, as the writer's did.
    static func postgres(version: Int) -> String {
        precondition(versions.contains(version), "no workload recorded for version \(version)")
        var parts = [postgresVisits(version: version)]
        if version >= 5 { parts.append(reporting(version: version)) }
        if version >= 6 { parts.append(dashboard(version: version)) }
        if version >= 11 { parts.append(providers) }
        return parts.joined(separator: "\n")
    }

    // MARK: What this build reads back

    /// `tokens export` of the upgraded store, in its order (first seen).
    static func exported(version: Int) -> [StoredToken] {
        let reporting = version >= 5
        func token(
            _ n: Int, _ id: String, environment: String = "production", link: String = "nl", country: String = "nl",
            destination: String = "https://nl.example/", firstSeen: Int64? = nil, lastSeen: Int64? = nil, hits: Int64 = 1,
            stale: Bool = false, other: Int64 = 0, experiment: String? = nil, variant: String? = nil, path: String? = nil,
            type: String? = nil, expires: Int64? = nil, report: String = "unreported", reportedAs: String? = nil
        ) -> StoredToken {
            StoredToken(
                externalPurchaseId: id, appAppleId: appAppleId, bundleId: bundleId, tokenCreationDate: created(n), tokenType: type,
                tokenExpirationDate: expires, environment: environment, link: link, country: country, destination: destination,
                firstSeen: firstSeen ?? seen(n), lastSeen: lastSeen ?? seen(n), hits: hits, stale: stale, otherVisits: other,
                experiment: experiment, variant: variant, path: path, report: reporting ? report : "unreported",
                reportedAs: reporting ? reportedAs : nil)
        }
        var tokens = [
            token(
                1, bought, lastSeen: seen(1) + 60_000, hits: 2, other: 1, experiment: "price", variant: "a", report: "reported",
                reportedAs: "LINE_ITEM"),
            token(2, quiet, country: "be", destination: "https://be.example/", stale: true, report: "reported", reportedAs: "NO_LINE_ITEM"),
            token(3, pending, experiment: "price", variant: "b", report: "sending"),
            token(4, changed, firstSeen: seen(4) - 5_000, other: 1),
            token(5, refused, report: "failed"),
            token(6, prefetched, hits: 0, other: 1),
            token(7, unrouted, link: "unrouted", country: "", destination: "", path: "/nl/"),
        ]
        if version >= 10 {
            tokens.append(
                token(
                    8, registered, link: "registered", country: "jp", destination: "", hits: 0, other: 1,
                    type: "SERVICES", expires: registeredExpires))
        }
        tokens.append(token(9, sandbox, environment: "sandbox"))
        return tokens
    }

    /// The tokens reporting knows of after its sync: every exported one, and those only Apple told of.
    static func reportingTokens(version: Int) -> [ExternalPurchaseToken] {
        var tokens = exported(version: version).map {
            ExternalPurchaseToken(
                appAppleId: $0.appAppleId, bundleId: $0.bundleId, tokenCreationDate: $0.tokenCreationDate,
                externalPurchaseId: $0.externalPurchaseId, tokenType: $0.tokenType.flatMap(TokenType.init(rawValue:)),
                tokenExpirationDate: $0.tokenExpirationDate)
        }
        if version >= 5 {
            tokens.append(
                ExternalPurchaseToken(
                    appAppleId: appAppleId, bundleId: bundleId, tokenCreationDate: created(10), externalPurchaseId: unknown))
            tokens.append(
                ExternalPurchaseToken(
                    appAppleId: appAppleId, bundleId: bundleId, tokenCreationDate: created(11), externalPurchaseId: custom,
                    tokenType: TokenType(rawValue: "ACQUISITION"), tokenExpirationDate: customExpires))
        }
        return tokens
    }
}
