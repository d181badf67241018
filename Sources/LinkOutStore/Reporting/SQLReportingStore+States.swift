import LinkOutCore

/// The reporting states of a token and of a report, as SQL: each rule written once, for every query that
/// reads by it (the outbox's planner and health, `report status`'s counts, the tokens' export).
extension SQLReportingStore {
    /// A token's reporting state for the export, from `report_tokens AS r` joined to the token: one
    /// expression for both stores' exports.
    static let exportColumns = """
        CASE WHEN r.external_purchase_id IS NULL THEN 'unreported' WHEN r.open_report IS NOT NULL THEN 'sending'
            WHEN r.blocked = 1 THEN 'failed' WHEN r.accepted_status IS NOT NULL THEN 'reported' ELSE 'unreported' END,
        r.accepted_status
        """

    /// A token (`alias`, or the table itself) whose changed line items are ready to report: changed at or
    /// before `cutoff` (a placeholder for now minus `reporting.gatherSeconds`), or due at once (a month
    /// closing). One rule for what `planReports` takes and what `status` counts as due.
    static func linesGatheredSQL(_ alias: String?, cutoff: String) -> String {
        let column = { (name: String) in alias.map { "\($0).\(name)" } ?? name }
        return "(\(column("lines_changed_at")) IS NOT NULL AND (\(column("lines_changed_at")) <= \(cutoff) OR \(column("due_now")) = 1))"
    }

    /// An outbox row's state as `report status` names it, from the row `alias` and `?1` (now): `sending`
    /// while a sender holds its lease, `retrying` once it was sent and waits to be sent again (after Apple's
    /// failure, a 401's pause, or a sender that stopped before Apple answered), `to_send` before its first
    /// send, else the row's own state (`accepted`, `failed`). One rule for the outbox's counts and the tokens'.
    static func reportStateSQL(_ alias: String) -> String {
        """
        CASE WHEN \(alias).state = 'sending' AND \(alias).lease_until > ?1 THEN 'sending'
            WHEN \(alias).state IN ('pending', 'sending') AND \(alias).attempts > 0 THEN 'retrying'
            WHEN \(alias).state IN ('pending', 'sending') THEN 'to_send'
            ELSE \(alias).state END
        """
    }
}
