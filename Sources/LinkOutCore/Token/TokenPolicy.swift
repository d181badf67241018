/// The rules a decoded token must meet, from the config.
public struct TokenPolicy: Sendable, Equatable {
    /// The longest `externalPurchaseToken` accepted, in bytes as sent (before percent-decoding), which also
    /// bounds the work done on it. Apple's samples are 204 to 284.
    public var maxLength: Int
    /// How far `tokenCreationDate` may lie ahead of this machine's clock.
    public var maxFutureSkewMs: Int64
    /// Tokens older than this are still accepted and recorded, but flagged `stale`: a shopper reaches the
    /// gateway seconds after StoreKit mints a token, so an old one is most likely a replayed link.
    public var staleAfterMs: Int64

    public static let defaults = TokenPolicy(maxLength: 4096, maxFutureSkewMs: 300_000, staleAfterMs: 3_600_000)

    public init(maxLength: Int, maxFutureSkewMs: Int64, staleAfterMs: Int64) {
        self.maxLength = maxLength
        self.maxFutureSkewMs = maxFutureSkewMs
        self.staleAfterMs = staleAfterMs
    }
}

/// An app allowed to send shoppers through the gateway.
public struct AllowedApp: Sendable, Equatable {
    public var bundleId: String
    public var appAppleId: Int64
    /// Which of its region's rates Apple's commission takes (`commission` in the config).
    public var commissionTier: CommissionTier

    public init(bundleId: String, appAppleId: Int64, commissionTier: CommissionTier = .standard) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.commissionTier = commissionTier
    }
}
