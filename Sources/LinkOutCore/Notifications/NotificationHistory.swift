/// Apple's notification history (the App Store Server API's Get Notification History,
/// `POST /inApps/v1/notifications/history`), which Apple's External Purchase Server API overview recommends
/// for notifications missed while the receiver was down. Apple retries a notification for three days
/// (production: after 1, 12, 24, 48 and 72 hours) and then gives up: a day-10 `UNREPORTED` for a token linkout
/// never saw, sent while linkout was down that long, would otherwise never be reported. linkout pages through
/// the `EXTERNAL_PURCHASE_TOKEN` history at start-up and daily, and takes each notification through the same
/// path as a pushed one (verified, then recorded once per `notificationUUID`).
///
/// The request, the pages and the span asked for, as pure functions; the fetching is the server's.
public enum NotificationHistory {
    public static let path = "/inApps/v1/notifications/history"

    /// How far back Apple keeps the history: 180 days in production, 30 in the sandbox.
    public static func keptDays(_ environment: TokenEnvironment) -> Int64 { environment == .sandbox ? 30 : 180 }

    /// How far before the end of the span last covered the next one starts: a notification Apple records a
    /// little after its `signedDate`, or a clock a little off, is still asked for. Duplicates cost nothing:
    /// each notification is taken once per `notificationUUID`.
    public static let overlapMs: Int64 = 3_600_000

    /// How often the history is asked for while serve runs (and once at start-up).
    public static let intervalMs: Int64 = 86_400_000
    /// After a failed fetch, how long before the next try.
    public static let retryMs: Int64 = 3_600_000

    /// The span to ask for: from the end of the last span covered (less the overlap), or `firstLookBackDays`
    /// back on the first fetch, never further back than Apple keeps (less an hour, so that the start is
    /// still within it when Apple reads it: Apple refuses a start too far in the past); to now. Empty when a
    /// mark lies ahead of this clock (a clock stepped back, or another instance's ahead): nothing to ask.
    public static func span(coveredUntil: Int64?, now: Int64, firstLookBackDays: Int64, environment: TokenEnvironment) -> Range<Int64> {
        let kept = now - keptDays(environment) * 86_400_000 + keptMarginMs
        let start = coveredUntil.map { $0 - overlapMs } ?? (now - firstLookBackDays * 86_400_000)
        let from = min(max(start, kept, 0), now)
        return from..<now
    }

    /// How far inside Apple's kept days the earliest start stays.
    public static let keptMarginMs: Int64 = 3_600_000

    /// The request body: Apple requires `startDate` and `endDate` (Unix ms); the type narrows it to tokens.
    public static func requestBody(_ span: Range<Int64>) -> String {
        #"{"startDate":\#(span.lowerBound),"endDate":\#(span.upperBound),"notificationType":"EXTERNAL_PURCHASE_TOKEN"}"#
    }

    /// One page of Apple's answer (`NotificationHistoryResponse`). `hasMore` without a `paginationToken`
    /// leaves the rest out of reach: the fetch fails, and the span is asked for again, never marked read.
    public struct Page: Sendable, Equatable {
        /// Each record's `signedPayload`: the notification as Apple signed it, to be verified as a pushed one is.
        public var signedPayloads: [String] = []
        public var hasMore = false
        public var paginationToken: String?
        public init() {}
    }

    /// The page, or nil when the body is not Apple's shape (a JSON object with a `notificationHistory`
    /// array). Records without a `signedPayload` are skipped (Apple documents none such); unknown members
    /// are ignored.
    public static func parsePage(_ body: [UInt8]) -> Page? {
        guard let document = try? JSONValue.parse(body), case .object(let members) = document,
            case .array? = members.first(where: { $0.key == "notificationHistory" })?.value
        else { return nil }
        var page = Page()
        for member in members {
            switch (member.key, member.value) {
            case ("hasMore", .bool(let more)): page.hasMore = more
            case ("paginationToken", .string(let token)): page.paginationToken = token.isEmpty ? nil : token
            case ("notificationHistory", .array(let records)):
                for case .object(let fields) in records {
                    if case .string(let payload)? = fields.first(where: { $0.key == "signedPayload" })?.value {
                        page.signedPayloads.append(payload)
                    }
                }
            default: break
            }
        }
        return page
    }

    /// A history record as the body of a pushed notification, `{"signedPayload": …}`, for the verifier.
    public static func notificationBody(_ signedPayload: String) -> [UInt8] {
        Array(#"{"signedPayload":\#(JSONText.quote(signedPayload))}"#.utf8)
    }
}
