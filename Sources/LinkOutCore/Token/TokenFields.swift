/// A token's known fields as its JSON gave them, before they are checked: what either reader
/// (`CompactTokenJSON` or the general one in `TokenDecoder`) fills, and where the rules for them live.
struct TokenFields: Equatable {
    var appAppleId: Int64?
    var bundleId: String?
    var tokenCreationDate: Int64?
    var externalPurchaseId: String?
    var tokenType: String?
    var tokenExpirationDate: Int64?
    /// The first known field, in the JSON's order, that had a value of another type.
    var wrongType: TokenField?

    /// The fields in the order StoreKit writes them, matched against keys without making strings. A
    /// field's position here is its bit in a reader's set of fields seen.
    static let names: [(field: TokenField, name: StaticString)] = [
        (.appAppleId, "appAppleId"), (.bundleId, "bundleId"), (.tokenCreationDate, "tokenCreationDate"),
        (.externalPurchaseId, "externalPurchaseId"), (.tokenType, "tokenType"),
        (.tokenExpirationDate, "tokenExpirationDate"),
    ]

    /// Sets a number field (`appAppleId`, `tokenCreationDate`, `tokenExpirationDate`).
    mutating func set(_ field: TokenField, _ number: Int64) {
        switch field {
        case .appAppleId: appAppleId = number
        case .tokenCreationDate: tokenCreationDate = number
        default: tokenExpirationDate = number
        }
    }

    /// Sets a string field (`bundleId`, `externalPurchaseId`, `tokenType`).
    mutating func set(_ field: TokenField, _ text: String) {
        switch field {
        case .bundleId: bundleId = text
        case .externalPurchaseId: externalPurchaseId = text
        default: tokenType = text
        }
    }

    /// The token, or the first rule it breaks: a field of the wrong type, a missing one, a type or an id of
    /// the wrong shape. Consuming, so the strings move into the token rather than being copied.
    consuming func token() -> Result<ExternalPurchaseToken, TokenRejection> {
        if let field = wrongType { return .failure(TokenRejection(.wrongFieldType, field: field)) }
        guard let appAppleId else { return .failure(TokenRejection(.missingField, field: .appAppleId)) }
        guard let bundleId = bundleId.take() else { return .failure(TokenRejection(.missingField, field: .bundleId)) }
        guard let tokenCreationDate else { return .failure(TokenRejection(.missingField, field: .tokenCreationDate)) }
        guard let externalPurchaseId = externalPurchaseId.take() else {
            return .failure(TokenRejection(.missingField, field: .externalPurchaseId))
        }
        // A type Apple has not documented, or one of the two custom-link fields without the other, is kept as
        // it is and flagged (`ExternalPurchaseToken.unusualType`): Apple may invent kinds, every token must be
        // reported, and an unsigned token's fields prove nothing either way. An expiry without a type is
        // accepted for the same reason; a given expiry is still enforced by the validator. Only the type's
        // shape is checked, since its string goes into the store, exports and logs.
        var type: TokenType?
        if let tokenType = tokenType.take() {
            guard let checked = TokenType(rawValue: tokenType) else {
                return .failure(TokenRejection(.invalidTokenType, field: .tokenType))
            }
            type = checked
        }
        guard ExternalPurchaseID.isValid(externalPurchaseId) else {
            return .failure(TokenRejection(.invalidExternalPurchaseId, field: .externalPurchaseId))
        }
        return .success(
            ExternalPurchaseToken(
                appAppleId: appAppleId, bundleId: bundleId, tokenCreationDate: tokenCreationDate,
                externalPurchaseId: externalPurchaseId, tokenType: type, tokenExpirationDate: tokenExpirationDate))
    }
}
