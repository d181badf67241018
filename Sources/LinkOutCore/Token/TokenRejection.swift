/// Why a link-out request's token was refused. Each reason has its own stable code, sent to operators in
/// the `X-Linkout-Reason` response header and used as a metric label; the shopper sees only a plain page.
public enum RejectReason: String, Sendable, CaseIterable {
    /// No `externalPurchaseToken` parameter (or an empty one).
    case missingToken = "missing_token"
    /// No `bundleId` parameter (or an empty one).
    case missingBundleId = "missing_bundle_id"
    /// `externalPurchaseToken` or `bundleId` given more than once: ambiguous, so neither is trusted.
    case duplicateParameter = "duplicate_parameter"
    /// A `%` escape that is not two hex digits in one of the two parameters.
    case malformedQuery = "malformed_query"
    case tokenTooLong = "token_too_long"
    case tokenNotBase64 = "token_not_base64"
    /// The decoded bytes are not one JSON object (or hold a duplicate field).
    case tokenNotJSON = "token_not_json"
    case missingField = "missing_field"
    case wrongFieldType = "wrong_field_type"
    /// Not a UUID, optionally prefixed `SANDBOX`.
    case invalidExternalPurchaseId = "invalid_external_purchase_id"
    /// The token's `bundleId` is not in the config's `apps`.
    case unknownApp = "unknown_app"
    /// The token's `appAppleId` is not the one configured for its `bundleId`.
    case appAppleIdMismatch = "app_apple_id_mismatch"
    /// The `bundleId` query parameter differs from the token's.
    case bundleIdMismatch = "bundle_id_mismatch"
    /// `tokenCreationDate` lies further in the future than the allowed clock skew.
    case createdInFuture = "created_in_future"
    /// A custom-link token past its `tokenExpirationDate`.
    case expired = "token_expired"
    /// A `tokenType` that is not 1 to 64 of `A-Z`, `0-9` and `_`. A type that is merely unknown is accepted.
    case invalidTokenType = "invalid_token_type"
}

extension RejectReason {
    /// A reason as written to a store or spool by this or an earlier build: `unknown_token_type` (refused
    /// before unknown types were accepted) reads as `invalid_token_type`, so a spool written before an
    /// upgrade still replays.
    public init?(stored text: String) {
        if text == "unknown_token_type" {
            self = .invalidTokenType
        } else {
            self.init(rawValue: text)
        }
    }
}

/// A refusal: the reason, and the token field it concerns where there is one.
public struct TokenRejection: Error, Sendable, Equatable {
    public var reason: RejectReason
    public var field: TokenField?

    public init(_ reason: RejectReason, field: TokenField? = nil) {
        self.reason = reason
        self.field = field
    }
}
