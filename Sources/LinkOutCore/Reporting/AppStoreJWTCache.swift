/// The JWT of each app, signed once and used for every request until it is old: one ES256 signature per
/// app every `renewAfterSeconds`, not one per request. A token is renewed well before it expires (its life
/// is `AppStoreJWT.lifetimeSeconds`, Apple allows 60 minutes), and at once after Apple refuses it (401).
/// Not `Sendable` (the signer is not): one per sending thread, as the signer.
public struct AppStoreJWTCache {
    public let signer: AppStoreJWT
    /// Renewed once this old: half its life, so one in use always has minutes left.
    public static let renewAfterSeconds: Int64 = AppStoreJWT.lifetimeSeconds / 2
    private var tokens: [String: (token: String, issuedAt: Int64)] = [:]

    public init(signer: AppStoreJWT) { self.signer = signer }

    /// The app's token at `now` (Unix seconds): the cached one, or a new one if it is old or none is.
    public mutating func token(bundleId: String, now: Int64) -> String {
        if let cached = tokens[bundleId], now >= cached.issuedAt, now - cached.issuedAt < Self.renewAfterSeconds { return cached.token }
        let token = signer.token(bundleId: bundleId, now: now)
        tokens[bundleId] = (token, now)
        return token
    }

    /// Apple refused the app's token (401): the next request signs a new one.
    public mutating func forget(bundleId: String) { tokens[bundleId] = nil }
}
