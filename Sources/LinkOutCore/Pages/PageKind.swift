/// The shopper-facing pages: one per answer that is not a redirect, and one per refusal family, so a
/// missing token does not read "expired". The raw value is the page's name in `Public/messages/*.json`
/// and in an operator's overrides folder (`<lang>/<name>.html`).
public enum PageKind: String, Sendable, CaseIterable {
    /// No token or no `bundleId` in the link.
    case missingToken = "400-missing-token"
    /// A token that is there but cannot be read or does not add up (the link was cut or altered).
    case damagedToken = "400-damaged-token"
    /// A custom-link token past its `tokenExpirationDate`.
    case expiredToken = "400-expired-token"
    /// A token for an app this gateway is not set up for.
    case unknownApp = "400-unknown-app"
    case notFound = "404"
    case methodNotAllowed = "405"
    case tooManyRequests = "429"
    case unavailable = "503"

    /// The HTTP status the page is sent with.
    public var status: Int {
        switch self {
        case .missingToken, .damagedToken, .expiredToken, .unknownApp: 400
        case .notFound: 404
        case .methodNotAllowed: 405
        case .tooManyRequests: 429
        case .unavailable: 503
        }
    }

    /// The page a refusal is answered with. Only four families: the shopper needs to know what to do
    /// next, not which check failed (operators get the exact reason in `X-Linkout-Reason`).
    public static func refusal(_ reason: RejectReason) -> PageKind {
        switch reason {
        case .missingToken, .missingBundleId: .missingToken
        case .expired: .expiredToken
        case .unknownApp, .appAppleIdMismatch: .unknownApp
        case .duplicateParameter, .malformedQuery, .tokenTooLong, .tokenNotBase64, .tokenNotJSON, .missingField,
            .wrongFieldType, .invalidExternalPurchaseId, .bundleIdMismatch, .createdInFuture, .invalidTokenType:
            .damagedToken
        }
    }

    /// Position in `allCases`, for the catalog's flat table.
    var index: Int {
        switch self {
        case .missingToken: 0
        case .damagedToken: 1
        case .expiredToken: 2
        case .unknownApp: 3
        case .notFound: 4
        case .methodNotAllowed: 5
        case .tooManyRequests: 6
        case .unavailable: 7
        }
    }
}
