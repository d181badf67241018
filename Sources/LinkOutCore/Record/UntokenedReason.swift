/// Why a link-out was recorded without a token (`untokened_visits.reason`).
public enum UntokenedReason: Sendable, Equatable, Hashable {
    /// The token was missing or refused, and the link sends such shoppers on anyway
    /// (`onInvalidToken: redirect`): a refusal, counted as one.
    case refused(RejectReason)
    /// A tap on a link that expects no token (`token: "none"`): no refusal, and nothing to report to Apple.
    case tap

    /// The text kept in the store: the refusal's code, or `tap` (no refusal code is `tap`). A monthly count
    /// of taps reads `WHERE reason = 'tap'`.
    public var stored: String {
        switch self {
        case .refused(let reason): reason.rawValue
        case .tap: Self.tapText
        }
    }

    static let tapText = "tap"

    /// A stored reason, as written by this or an earlier build (`RejectReason(stored:)` for refusals); nil
    /// for text no build wrote.
    public init?(stored text: String) {
        if text == Self.tapText {
            self = .tap
        } else if let reason = RejectReason(stored: text) {
            self = .refused(reason)
        } else {
            return nil
        }
    }

    /// The refusal, nil for a tap.
    public var refusal: RejectReason? {
        if case .refused(let reason) = self { reason } else { nil }
    }
}
