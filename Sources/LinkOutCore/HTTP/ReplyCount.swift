/// What an answer counts as in the gateway's request metrics, decided with the answer and counted where
/// it leaves (the gateway's `answered`), so each answer is counted once and as what the client got: a
/// strict link-out whose commit failed counts as the 503 it was answered with, not as the redirect it
/// would have been.
///
/// Metrics of the record rather than of the answer (visits by kind, unrouted and unusual tokens) are
/// counted when the record is handed to the writer; a slow client closed before any request, when it is.
public enum ReplyCount: Sendable, Equatable {
    /// Counted elsewhere or not at all: the favicon, robots.txt, Apple's notifications (their own
    /// metrics), the admin and API listeners.
    case uncounted
    case health
    case notFound
    case methodNotAllowed
    /// A refused request head or body.
    case malformed
    /// An answer for a link, which `link` names as the config the decision was made with had it (a reload
    /// between the decision and a strict answer may have moved its index).
    case link(LinkReference, LinkOutcome)
}

/// A configured link, by its index in the config's links and its id.
public struct LinkReference: Sendable, Equatable {
    public var index: Int
    public var id: String

    public init(index: Int, id: String) {
        self.index = index
        self.id = id
    }
}

/// What a link's request ended as.
public enum LinkOutcome: Sendable, Equatable {
    case rateLimited
    /// Refused with the link's refusal page.
    case rejected(RejectReason)
    /// 503: the writer was full or stopping, or (strict) the commit failed. `refusal`: the token had been
    /// refused and was being sent on anyway (`onInvalidToken: redirect`).
    case unavailable(refusal: RejectReason?)
    /// Sent to the link's destination at `destination` (in `Link.destinationURLs`).
    case redirected(destination: Int, allDown: Bool)
    /// A refused token sent on anyway (`onInvalidToken: redirect`).
    case redirectedWithoutToken(RejectReason, allDown: Bool)
    /// A tap on a link that expects no token (`token: "none"`), sent to the destination at `destination`:
    /// no refusal.
    case tapped(destination: Int, allDown: Bool)
}

extension ReplyCount {
    /// What the same request counts as when it is answered 503 instead (the writer full or stopping, or a
    /// strict commit that failed). An unrouted token with nowhere to go has no link to count it on.
    public var unavailable: ReplyCount {
        switch self {
        case .link(let link, .redirected), .link(let link, .tapped): .link(link, .unavailable(refusal: nil))
        case .link(let link, .redirectedWithoutToken(let reason, _)): .link(link, .unavailable(refusal: reason))
        case .notFound: .uncounted
        default: self
        }
    }
}
