/// Whether, and when, the reporter sends again on its own a report Apple refused (a 400 that is not a
/// duplicate). Apple took nothing of it, and its documentation says to resend a failed report with the same
/// `requestIdentifier`; a correction is a new report with a new one (a restatement of its line items).
///
/// A refusal may be the body's fault or Apple's own state: an entitlement not yet active for the account, a
/// token Apple has not yet heard of, an outage answered as 400. linkout cannot tell for certain (Apple
/// publishes few of its error codes), so it reads what the errors point at:
/// - errors naming a line item (`lineItemId`, or a `fieldName` under `lineItems`) are the body's: sending it
///   unchanged would be refused again, so only a restatement (or `linkout report retry`) sends it;
/// - anything else may be Apple's state: a `NO_LINE_ITEM` or `UNRECOGNIZED_TOKEN` body holds nothing but the
///   token's id and status, which linkout checked when it recorded the token, so there is nothing in it to
///   correct. Such a report is sent again after `firstWaitMs`, then twice as long each time up to a day,
///   at most `limit` times; past that it waits for `linkout report retry`.
public enum RefusalRetry {
    /// The longest wait between two automatic retries of a refused report.
    public static let maximumWaitMs: Int64 = 86_400_000

    /// Whether Apple's errors leave room for a refusal that is not the body's fault.
    public static func mayBeApplesState(status: String, errors: [ExternalPurchaseReportError]?) -> Bool {
        if status != ExternalPurchaseReportStatus.lineItem.rawValue { return true }
        guard let errors else { return true }
        return !errors.contains { error in
            error.lineItemId != nil
                || (error.fieldName.map { $0 == "lineItems" || $0.hasPrefix("lineItems[") || $0.hasPrefix("lineItems.") } ?? false)
        }
    }

    /// When to send a refused report again on its own (Unix ms), or nil when only an operator or a
    /// restatement sends it again.
    /// - Parameter refusals: Apple's refusals of this report, this one counted.
    public static func nextAttempt(status: String, answer: String, refusals: Int, now: Int64, firstWaitMs: Int64, limit: Int) -> Int64? {
        guard refusals <= limit, firstWaitMs > 0,
            mayBeApplesState(status: status, errors: ExternalPurchaseReportError.parseErrors(Array(answer.utf8)))
        else { return nil }
        let shift = Int64(min(max(refusals - 1, 0), 20))
        return now + min(firstWaitMs << shift, maximumWaitMs)
    }
}
