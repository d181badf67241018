import Crypto
import Foundation
import Testing

@testable import LinkOutCore

/// The JWT is taken apart with Foundation's base64 and JSON decoders and checked with swift-crypto's
/// verifier: nothing of linkout's own framing is trusted to check itself.
@Suite("AppStoreJWT")
struct AppStoreJWTTests {
    static let keyId = "2X9R4HXF34"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"
    static let now: Int64 = 1_760_000_000

    struct Parts {
        var header: [String: Any]
        var claims: [String: Any]
        var signature: [UInt8]
        var signingInput: String
    }

    /// base64url without padding, as JWTs use it, through Foundation.
    static func base64URLDecode(_ text: Substring) throws -> Data {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        #expect(!text.contains("="), "JWT segments carry no padding")
        while standard.count % 4 != 0 { standard += "=" }
        return try #require(Data(base64Encoded: standard), "not base64url: \(text)")
    }

    static func split(_ token: String) throws -> Parts {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(segments.count == 3, "a JWT has three segments: \(token)")
        let header = try #require(try JSONSerialization.jsonObject(with: base64URLDecode(segments[0])) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: base64URLDecode(segments[1])) as? [String: Any])
        return Parts(
            header: header, claims: claims, signature: Array(try base64URLDecode(segments[2])),
            signingInput: segments[0] + "." + segments[1])
    }

    static func signer(_ key: P256.Signing.PrivateKey) throws -> AppStoreJWT {
        try AppStoreJWT(privateKeyPEM: key.pemRepresentation, keyId: keyId, issuerId: issuerId)
    }

    @Test("header: exactly alg ES256, kid and typ JWT")
    func header() throws {
        let parts = try Self.split(try Self.signer(P256.Signing.PrivateKey()).token(bundleId: "com.example", now: Self.now))
        #expect(Set(parts.header.keys) == ["alg", "kid", "typ"])
        #expect(parts.header["alg"] as? String == "ES256")
        #expect(parts.header["kid"] as? String == Self.keyId)
        #expect(parts.header["typ"] as? String == "JWT")
    }

    @Test("claims: iss, iat, exp five minutes later, aud and bid")
    func claims() throws {
        let parts = try Self.split(try Self.signer(P256.Signing.PrivateKey()).token(bundleId: "com.example", now: Self.now))
        #expect(Set(parts.claims.keys) == ["iss", "iat", "exp", "aud", "bid"])
        #expect(parts.claims["iss"] as? String == Self.issuerId)
        #expect((parts.claims["iat"] as? NSNumber)?.int64Value == Self.now)
        #expect((parts.claims["exp"] as? NSNumber)?.int64Value == Self.now + 1_200)
        #expect(parts.claims["aud"] as? String == "appstoreconnect-v1")
        #expect(parts.claims["bid"] as? String == "com.example")
    }

    @Test("the signature is raw r‖s (64 bytes) and verifies with the public key over the signing input")
    func signature() throws {
        let key = P256.Signing.PrivateKey()
        let parts = try Self.split(try Self.signer(key).token(bundleId: "com.example", now: Self.now))
        #expect(parts.signature.count == 64)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: parts.signature)
        #expect(key.publicKey.isValidSignature(signature, for: Data(parts.signingInput.utf8)))
        // Another key, or another input, does not verify: the check above is not vacuous.
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Data(parts.signingInput.utf8)))
        #expect(!key.publicKey.isValidSignature(signature, for: Data((parts.signingInput + "x").utf8)))
    }

    @Test("a bundle id with a quote and a backslash is escaped: the claims stay valid JSON")
    func escapedBundleId() throws {
        let odd = #"com.example"},"admin":true,"x":"\"#
        let parts = try Self.split(try Self.signer(P256.Signing.PrivateKey()).token(bundleId: odd, now: Self.now))
        #expect(parts.claims["bid"] as? String == odd)
        #expect(parts.claims["admin"] == nil)
    }

    @Test("a PKCS#8 PEM, as in Apple's .p8 file, is accepted and signs verifiable tokens")
    func pkcs8() throws {
        let key = P256.Signing.PrivateKey()
        let pem = key.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let parts = try Self.split(
            try AppStoreJWT(privateKeyPEM: pem, keyId: Self.keyId, issuerId: Self.issuerId)
                .token(bundleId: "com.example", now: Self.now))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: parts.signature)
        #expect(key.publicKey.isValidSignature(signature, for: Data(parts.signingInput.utf8)))
    }

    @Test(
        "garbage, an empty file or a public key is refused with a message naming the .p8 file",
        arguments: [
            "not a key", "",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            P256.Signing.PrivateKey().publicKey.pemRepresentation,
        ])
    func garbage(_ pem: String) {
        #expect {
            _ = try AppStoreJWT(privateKeyPEM: pem, keyId: Self.keyId, issuerId: Self.issuerId)
        } throws: { error in
            (error as? AppStoreJWT.KeyError)?.message.contains("not a P-256 private key in PEM form") == true
                && "\(error)".contains(".p8")
        }
    }
}

@Suite("AppStoreJWTCache")
struct AppStoreJWTCacheTests {
    static let now: Int64 = 1_760_000_000

    @Test("one token per app for half its life, then a new one; a new one at once after a 401")
    func renewal() throws {
        let signer = try AppStoreJWTTests.signer(P256.Signing.PrivateKey())
        var cache = AppStoreJWTCache(signer: signer)
        let first = cache.token(bundleId: "com.example", now: Self.now)
        #expect(cache.token(bundleId: "com.example", now: Self.now + AppStoreJWTCache.renewAfterSeconds - 1) == first)
        let other = cache.token(bundleId: "com.example.other", now: Self.now)
        #expect(other != first)
        #expect(try AppStoreJWTTests.split(other).claims["bid"] as? String == "com.example.other")
        let renewed = cache.token(bundleId: "com.example", now: Self.now + AppStoreJWTCache.renewAfterSeconds)
        #expect(renewed != first)
        #expect(AppStoreJWTCache.renewAfterSeconds * 2 <= AppStoreJWT.lifetimeSeconds)
        #expect(AppStoreJWT.lifetimeSeconds <= 3_600)
        cache.forget(bundleId: "com.example")
        #expect(cache.token(bundleId: "com.example", now: Self.now + AppStoreJWTCache.renewAfterSeconds + 1) != renewed)
        // A clock set back signs anew rather than hand out a token issued in the future.
        #expect(cache.token(bundleId: "com.example.other", now: Self.now - 10) != other)
    }
}
