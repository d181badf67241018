/// What `report verify` makes of Apple's answer to `GET /externalPurchase/v1/reports/{requestIdentifier}`:
/// the rules as one pure function, as `ReportAnswer` has them for sending.
public enum ReportLookupAnswer: Sendable, Equatable {
    /// 200: Apple's copy, parsed (compare it with what was sent); nil when the body is not JSON, itself a
    /// difference, since the report linkout sent was.
    case held(JSONValue?)
    /// 404: Apple holds no report with this identifier, though it accepted one: a difference.
    case notHeld
    /// 401 or 403: the key, key ID, issuer ID or bundle ID is refused, for every report alike: stop.
    case unauthorized
    /// 429, 5xx or no answer: ask again later, after `afterMs` when Apple said how long (`Retry-After`),
    /// else after the pacing's backoff.
    case retry(afterMs: Int64?, why: String)
    /// Any other answer (another 4xx, a redirect): this report cannot be checked, the others may.
    case unreadable(why: String)

    /// - Parameters:
    ///   - status: the HTTP status, nil when no answer came.
    ///   - now: Unix ms, to read a `Retry-After` given as a date.
    public static func classify(
        status: Int?, body: String, retryAfter: String?, now: Int64, transportError: String = ""
    ) -> ReportLookupAnswer {
        guard let status else { return .retry(afterMs: nil, why: transportError.isEmpty ? "no answer" : transportError) }
        switch status {
        case 200:
            return .held(try? JSONValue.parse(Array(body.utf8)))
        case 404:
            return .notHeld
        case 401, 403:
            return .unauthorized
        case 429:
            return .retry(afterMs: retryAfter.flatMap { ReportAnswer.retryAfterMs($0, now: now) }, why: "HTTP 429 rate limited")
        case 500...599:
            return .retry(afterMs: nil, why: "HTTP \(status)")
        default:
            return .unreadable(why: "HTTP \(status) \(body.prefix(200))")
        }
    }
}
