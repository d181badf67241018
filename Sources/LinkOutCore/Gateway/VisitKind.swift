/// Who a link-out visit is from, as far as the request tells. Every kind is answered the same way and
/// its token recorded (every token is reported to Apple), but only a shopper's visit counts as a hit.
public enum VisitKind: String, Sendable, Equatable, CaseIterable {
    case shopper
    /// `Purpose: prefetch` or `Sec-Purpose: prefetch…`: a browser loading ahead of a tap.
    case prefetch
    /// HEAD: link checkers and previews.
    case head
    /// A known crawler, link-preview fetcher or scanner, by its User-Agent.
    case bot
    /// Not a visit: the app's backend handed the token over (`POST /v1/tokens`, `tokens import`), as for a
    /// custom-link token that never passes a link. Recorded like a visit so the token is kept, merged and
    /// reported by the same path; never a hit, and not drawn on the dashboard's visits.
    case registered

    /// Whether the dashboard counts it among a link's visits (a registration has no link).
    public var isVisit: Bool { self != .registered }
}
