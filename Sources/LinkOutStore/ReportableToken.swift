import LinkOutCore

/// A token as reporting sees it.
public struct ReportableToken: Sendable, Equatable {
    public var externalPurchaseId: String
    public var bundleId: String
    public var appAppleId: Int64
    public var environment: TokenEnvironment
    public var tokenCreationDate: Int64
    public var tokenType: String?
    public var tokenExpirationDate: Int64?

    public init(
        externalPurchaseId: String, bundleId: String, appAppleId: Int64, tokenCreationDate: Int64,
        tokenType: String? = nil, tokenExpirationDate: Int64? = nil
    ) {
        self.externalPurchaseId = externalPurchaseId
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = TokenEnvironment(externalPurchaseId: externalPurchaseId)
        self.tokenCreationDate = tokenCreationDate
        self.tokenType = tokenType
        self.tokenExpirationDate = tokenExpirationDate
    }
}
