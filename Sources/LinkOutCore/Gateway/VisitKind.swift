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
}
