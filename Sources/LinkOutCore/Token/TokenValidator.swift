/// Checks a decoded token against the config's allow-list, the request's `bundleId` and the clock.
public struct TokenValidator: Sendable {
    public let policy: TokenPolicy
    private let appAppleIds: [String: Int64]
    /// The same look-up by the bundle ID's bytes, tried first: a real token's `bundleId` is byte for byte
    /// one of the apps', and comparing a few bytes costs far less than hashing a `String` (some 300
    /// instructions). Each app's id is the dictionary's, so both answer alike.
    private let appsByBytes: [(bundleId: [UInt8], appAppleId: Int64)]

    public init(policy: TokenPolicy, apps: [AllowedApp]) {
        self.policy = policy
        let appAppleIds = Dictionary(apps.map { ($0.bundleId, $0.appAppleId) }, uniquingKeysWith: { first, _ in first })
        self.appAppleIds = appAppleIds
        self.appsByBytes = apps.map { (Array($0.bundleId.utf8), appAppleIds[$0.bundleId]!) }
    }

    /// The configured `appAppleId` for a bundle ID: by its bytes, else as a `String`, which also finds a
    /// spelling that is canonically equivalent (as Swift compares strings) but not the same bytes.
    private func appAppleId(for bundleId: String) -> Int64? {
        let byBytes = bundleId.utf8.withContiguousStorageIfAvailable { bytes in
            appsByBytes.first { app in app.bundleId.withUnsafeBytes { $0.equals(UnsafeRawBufferPointer(bytes)) } }?.appAppleId
        }
        if let byBytes, let found = byBytes { return found }
        return appAppleIds[bundleId]
    }

    /// A token that passed, and whether it is stale.
    public struct Accepted: Sendable, Equatable {
        public var token: ExternalPurchaseToken
        public var stale: Bool
    }

    public func validate(_ token: ExternalPurchaseToken, bundleIdParameter: String, nowMs: Int64) -> Result<Accepted, TokenRejection> {
        staleness(of: token, sameBundleId: token.bundleId == bundleIdParameter, nowMs: nowMs).map { Accepted(token: token, stale: $0) }
    }

    /// The request path's: the `bundleId` parameter as the query holds it, with no `String` made for it
    /// unless its bytes differ from the token's (then it is compared as the `String` it decodes to, as
    /// above); and whether the token is stale rather than an `Accepted`, which would be a copy of it.
    func staleness(of token: ExternalPurchaseToken, bundleIdParameter: UnsafeRawBufferPointer, nowMs: Int64) -> Result<Bool, TokenRejection>
    {
        let sameBytes = token.bundleId.utf8.withContiguousStorageIfAvailable { UnsafeRawBufferPointer($0).equals(bundleIdParameter) }
        let same = sameBytes == true || token.bundleId == String(decoding: bundleIdParameter, as: UTF8.self)
        return staleness(of: token, sameBundleId: same, nowMs: nowMs)
    }

    /// The checks, in order; whether the token is stale when it passes them.
    private func staleness(of token: ExternalPurchaseToken, sameBundleId: Bool, nowMs: Int64) -> Result<Bool, TokenRejection> {
        guard sameBundleId else {
            return .failure(TokenRejection(.bundleIdMismatch, field: .bundleId))
        }
        guard let expectedAppleId = appAppleId(for: token.bundleId) else {
            return .failure(TokenRejection(.unknownApp, field: .bundleId))
        }
        guard token.appAppleId == expectedAppleId else {
            return .failure(TokenRejection(.appAppleIdMismatch, field: .appAppleId))
        }
        if token.tokenCreationDate > nowMs &+ policy.maxFutureSkewMs {
            return .failure(TokenRejection(.createdInFuture, field: .tokenCreationDate))
        }
        if let expiration = token.tokenExpirationDate, expiration <= nowMs {
            return .failure(TokenRejection(.expired, field: .tokenExpirationDate))
        }
        // A creation date so far back that the age overflows is stale, not fresh.
        let (age, overflow) = nowMs.subtractingReportingOverflow(token.tokenCreationDate)
        return .success(overflow || age > policy.staleAfterMs)
    }
}
