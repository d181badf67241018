/// Makes well-formed tokens, so the flow can be tried without a device (`linkout mint-token`) and tests
/// can build their fixtures from JSON they wrote.
public enum TokenMinter {
    /// The token's JSON, in the field order and layout StoreKit uses.
    public static func json(_ token: ExternalPurchaseToken) -> String {
        var fields = [
            "\"appAppleId\":\(token.appAppleId)",
            "\"bundleId\":\(JSONText.quote(token.bundleId))",
            "\"tokenCreationDate\":\(token.tokenCreationDate)",
            "\"externalPurchaseId\":\(JSONText.quote(token.externalPurchaseId))",
        ]
        if let type = token.tokenType { fields.append("\"tokenType\":\"\(type.rawValue)\"") }
        if let expiration = token.tokenExpirationDate { fields.append("\"tokenExpirationDate\":\(expiration)") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// The token as StoreKit hands it over: URL-safe base64 without padding.
    public static func mint(_ token: ExternalPurchaseToken) -> String {
        TokenBase64.encodeURLSafe(Array(json(token).utf8))
    }
}
