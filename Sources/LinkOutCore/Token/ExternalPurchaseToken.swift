/// The decoded content of an `externalPurchaseToken`, with the fields Apple documents.
///
/// Link-out tokens (from `ExternalPurchaseLink.open()`) carry neither `tokenType` nor
/// `tokenExpirationDate`; custom-link tokens carry both.
public struct ExternalPurchaseToken: Sendable, Equatable {
    public var appAppleId: Int64
    public var bundleId: String
    /// Unix time in milliseconds.
    public var tokenCreationDate: Int64
    /// A UUID, prefixed with `SANDBOX` for sandbox tokens. The token's unique key.
    public var externalPurchaseId: String
    public var tokenType: TokenType?
    /// Unix time in milliseconds.
    public var tokenExpirationDate: Int64?

    public init(
        appAppleId: Int64, bundleId: String, tokenCreationDate: Int64, externalPurchaseId: String,
        tokenType: TokenType? = nil, tokenExpirationDate: Int64? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.tokenCreationDate = tokenCreationDate
        self.externalPurchaseId = externalPurchaseId
        self.tokenType = tokenType
        self.tokenExpirationDate = tokenExpirationDate
    }

    /// Sandbox ids start with `SANDBOX`; their reports go to Apple's sandbox endpoint, never mixed.
    public var environment: TokenEnvironment {
        externalPurchaseId.utf8.starts(with: "SANDBOX".utf8) ? .sandbox : .production
    }
}

public enum TokenEnvironment: String, Sendable, CaseIterable {
    case production
    case sandbox
}

/// Custom-link token types. Japan's documentation adds `IN_APP` and `LINK_OUT`.
public enum TokenType: String, Sendable, CaseIterable {
    case acquisition = "ACQUISITION"
    case services = "SERVICES"
    case inApp = "IN_APP"
    case linkOut = "LINK_OUT"
}

/// The token's JSON field names, as Apple spells them.
public enum TokenField: String, Sendable, CaseIterable {
    case appAppleId
    case bundleId
    case tokenCreationDate
    case externalPurchaseId
    case tokenType
    case tokenExpirationDate
}
