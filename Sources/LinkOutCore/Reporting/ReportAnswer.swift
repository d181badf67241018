/// What the reporter does with Apple's answer to one report: the rules of Apple's External Purchase Server
/// API as one pure function, so every case is tested without a network.
public enum ReportAnswer: Sendable, Equatable {
    /// 200: Apple took the report.
    case accepted
    /// 400 naming the `requestIdentifier` as a duplicate: an earlier send of this very report landed (its
    /// answer was lost). Read it back with GET before calling it accepted.
    case confirmDuplicate
    /// 400 with errors: nothing of the report was taken, and sending it again unchanged cannot succeed.
    /// The checkout must correct its lines (a restatement), so the report is failed, never retried blind.
    case failed(errors: String)
    /// 5xx, 429 or no answer: the same report, with the same `requestIdentifier`, after `afterMs`.
    case retry(afterMs: Int64, why: String)
    /// 401: the key, key ID, issuer ID or bundle ID is wrong. Every report would fail the same way, so
    /// the reporter stops sending until an operator fixes the config (and alerts meanwhile).
    case unauthorized

    /// Each retry waits twice as long as the one before, up to an hour.
    public static let maximumBackoffMs: Int64 = 3_600_000

    /// - Parameters:
    ///   - status: the HTTP status, or nil when no answer came (connection refused, timeout, TLS failure).
    ///   - retryAfter: the `Retry-After` header, if any.
    ///   - failures: Apple's failures of this report (5xx, 429, no answer), this answer counted as one: what
    ///     the backoff doubles with. A send whose sender stopped before any answer came is not one.
    ///   - now: Unix ms, to read a `Retry-After` given as a date in ms.
    ///   - firstBackoffMs: the wait before the first retry.
    public static func classify(
        status: Int?, body: String, retryAfter: String?, failures: Int, now: Int64, firstBackoffMs: Int64, transportError: String = ""
    ) -> ReportAnswer {
        func backoff() -> Int64 { Self.backoff(failures: failures, first: firstBackoffMs) }
        guard let status else {
            return .retry(afterMs: backoff(), why: transportError.isEmpty ? "no answer" : transportError)
        }
        switch status {
        case 200...299:
            return .accepted
        case 401, 403:
            return .unauthorized
        case 429:
            let wait = retryAfter.flatMap { retryAfterMs($0, now: now) } ?? backoff()
            return .retry(afterMs: wait, why: "429 rate limited")
        case 400...499:
            if isDuplicateRequestIdentifier(body) { return .confirmDuplicate }
            return .failed(errors: body.isEmpty ? "HTTP \(status) without a body" : body)
        default:
            return .retry(afterMs: backoff(), why: "HTTP \(status)")
        }
    }

    /// `first` after the first failure, twice that after the second, four times … up to an hour.
    public static func backoff(failures: Int, first: Int64) -> Int64 {
        let shift = min(max(failures - 1, 0), 20)
        return min(first << Int64(shift), maximumBackoffMs)
    }

    /// Apple's App Store Server API gives `Retry-After` as a Unix time in milliseconds; HTTP's own form is
    /// seconds to wait. A value too small to be a date is seconds. Bounded to an hour either way.
    public static func retryAfterMs(_ text: String, now: Int64) -> Int64? {
        guard let value = Int64(text.trimmingSpaces) else { return nil }
        let wait = value > 1_000_000_000_000 ? value - now : value * 1000
        return min(max(wait, 1000), maximumBackoffMs)
    }

    /// Apple's duplicate answer: an error whose `fieldName` is `requestIdentifier` (`DuplicateValueError`).
    /// Matched on the field rather than the message's wording.
    static func isDuplicateRequestIdentifier(_ body: String) -> Bool {
        ExternalPurchaseReportError.parseErrors(Array(body.utf8))?.contains { $0.fieldName == "requestIdentifier" } ?? false
    }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        var text = self[...]
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
