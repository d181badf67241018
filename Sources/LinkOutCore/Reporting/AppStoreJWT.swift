import Crypto

/// The bearer token of every request to Apple's External Purchase Server API: a JWT signed with ES256 by
/// the team's In-App Purchase key, one per app (`bid`), short-lived.
///
/// Made with swift-crypto's P-256 (BoringSSL), not by hand: only the JSON and base64url framing is ours.
/// ES256 in a JWT is the raw 64-byte r‖s, which is swift-crypto's `rawRepresentation`, not DER.
/// Not `Sendable`: swift-crypto's key is not; each sending thread makes its own.
public struct AppStoreJWT {
    /// Apple allows at most 60 minutes; its own library signs for 5. linkout signs one per app and keeps
    /// it for half its life (`AppStoreJWTCache`): at hundreds of reports a second a signature per request
    /// would be most of the reporter's CPU.
    public static let lifetimeSeconds: Int64 = 1_200
    public static let audience = "appstoreconnect-v1"

    private let key: P256.Signing.PrivateKey
    public let keyId: String
    public let issuerId: String

    /// Reads the `.p8` file's text (PKCS#8 PEM, `BEGIN PRIVATE KEY`), or SEC1 (`BEGIN EC PRIVATE KEY`).
    public init(privateKeyPEM: String, keyId: String, issuerId: String) throws(KeyError) {
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw KeyError(message: "not a P-256 private key in PEM form (the In-App Purchase key's .p8 file): \(error)")
        }
        self.keyId = keyId
        self.issuerId = issuerId
    }

    public struct KeyError: Error, CustomStringConvertible, Sendable {
        public var message: String
        public var description: String { message }
    }

    /// A signed token for `bundleId`, issued at `now` (Unix seconds).
    public func token(bundleId: String, now: Int64) -> String {
        let header = #"{"alg":"ES256","kid":"# + JSONText.quote(keyId) + #","typ":"JWT"}"#
        let claims =
            #"{"iss":"# + JSONText.quote(issuerId)
            + #","iat":\#(now),"exp":\#(now + Self.lifetimeSeconds),"aud":"\#(Self.audience)","bid":"# + JSONText.quote(bundleId) + "}"
        let signingInput = TokenBase64.encodeURLSafe(Array(header.utf8)) + "." + TokenBase64.encodeURLSafe(Array(claims.utf8))
        // ECDSA over SHA-256 of the signing input; swift-crypto hashes it.
        let signature = (try? key.signature(for: Array(signingInput.utf8))).map { Array($0.rawRepresentation) } ?? []
        return signingInput + "." + TokenBase64.encodeURLSafe(signature)
    }
}
