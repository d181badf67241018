import Crypto
import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// linkout's verifier against notifications signed by the tests' chain (NotificationSigner): every property
/// Apple's documentation says to check, each broken on its own; and Apple's own Python library on the same
/// notifications, as a verifier nobody here wrote.
@Suite struct NotificationVerifierTests {
    static let apps = [AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890)]

    func verifier(
        _ signer: NotificationSigner, cache: Int = NotificationVerifier.defaultVerdictCacheCapacity
    ) throws -> NotificationVerifier {
        try NotificationVerifier(
            rootsPEM: [String(contentsOfFile: signer.rootPEM, encoding: .utf8)], apps: Self.apps, verdictCacheCapacity: cache)
    }

    func refusal(_ body: [UInt8], _ verifier: NotificationVerifier) async -> NotificationRefusal.Reason? {
        do throws(NotificationRefusal) {
            _ = try await verifier.verify(body: body)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func aValidNotificationDecodesWithEveryTokenField() async throws {
        let signer = try NotificationSigner.shared()
        let payload = NotificationSigner.payload(
            subtype: "CREATED", externalPurchaseId: "SANDBOX_custom-1", created: 1_700_000_000_000, tokenType: "ACQUISITION",
            expiration: 1_800_000_000_000)
        let verified = try await verifier(signer).verify(body: NotificationSigner.body(signer.sign(payload)))
        #expect(verified.notificationType == "EXTERNAL_PURCHASE_TOKEN")
        #expect(verified.subtype == "CREATED")
        #expect(verified.notificationUUID == payload["notificationUUID"] as? String)
        #expect(verified.environment == .sandbox)
        #expect(
            verified.token
                == ExternalPurchaseToken(
                    appAppleId: 1_234_567_890, bundleId: "com.example", tokenCreationDate: 1_700_000_000_000,
                    externalPurchaseId: "SANDBOX_custom-1",
                    tokenType: .acquisition, tokenExpirationDate: 1_800_000_000_000))
        #expect(verified.action == .recordCustomLinkToken(verified.token!))
    }

    @Test func eachBrokenPropertyIsRefusedWithItsReason() async throws {
        let signer = try NotificationSigner.shared()
        let verifier = try verifier(signer)
        func payload(bundleId: String = "com.example", appAppleId: Int64 = 1_234_567_890, id: String = "token-1") -> [String: Any] {
            NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: id, bundleId: bundleId, appAppleId: appAppleId)
        }
        let cases: [(String, [UInt8], NotificationRefusal.Reason)] = [
            ("wrong alg", NotificationSigner.body(signer.sign(payload(), alg: "ES384")), .wrongAlgorithm),
            ("alg none", NotificationSigner.body(signer.sign(payload(), alg: "none")), .wrongAlgorithm),
            ("two certificates", NotificationSigner.body(signer.sign(payload(), chain: .twoCertificates)), .certificateCount),
            ("a chain to another root", NotificationSigner.body(signer.sign(payload(), chain: .otherRoot)), .untrustedChain),
            ("a leaf without Apple's OID", NotificationSigner.body(signer.sign(payload(), chain: .leafWithoutOID)), .leafOIDMissing),
            (
                "an intermediate without Apple's OID", NotificationSigner.body(signer.sign(payload(), chain: .intermediateWithoutOID)),
                .intermediateOIDMissing
            ),
            ("a leaf expired at signedDate", NotificationSigner.body(signer.sign(payload(), chain: .expiredLeaf)), .untrustedChain),
            ("a bad signature", NotificationSigner.body(signer.sign(payload(), tamper: true)), .badSignature),
            ("another app", NotificationSigner.body(signer.sign(payload(bundleId: "com.other"))), .unknownApp),
            ("another app's appAppleId in production", NotificationSigner.body(signer.sign(payload(appAppleId: 42))), .wrongAppAppleId),
            ("malformed JSON", Array(#"{"signedPayload": "#.utf8), .malformedBody),
            ("no signedPayload", Array(#"{"payload": "x.y.z"}"#.utf8), .malformedBody),
            ("not a JWS", NotificationSigner.body("abc.def"), .malformedJWS),
        ]
        for (name, body, reason) in cases {
            #expect(await refusal(body, verifier) == reason, "\(name)")
        }
        // Found while writing fuzz-notification: swift-certificates traps on a validation time past year 9999, which a
        // signedDate anyone can write reached. Refused before any certificate is looked at.
        let far = NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "token-4", signedDate: 1_000_000_000_000_000)
        #expect(await refusal(NotificationSigner.body(signer.sign(far)), verifier) == .malformedPayload)
        #expect(await refusal(NotificationSigner.body(signer.sign(far, chain: .otherRoot)), verifier) == .malformedPayload)
        // The last second of 9999 is judged (the chain has expired by then); half a second later, which
        // swift-certificates rounds up to year 10000, is refused like any later date.
        let lastSecond = NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "token-5", signedDate: 253_402_300_799_000)
        #expect(await refusal(NotificationSigner.body(signer.sign(lastSecond)), verifier) == .untrustedChain)
        let roundedUp = NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "token-6", signedDate: 253_402_300_799_500)
        #expect(await refusal(NotificationSigner.body(signer.sign(roundedUp)), verifier) == .malformedPayload)
        // appAppleId is checked in production only, as Apple's libraries do.
        #expect(await refusal(NotificationSigner.body(signer.sign(payload(appAppleId: 42, id: "SANDBOX_1"))), verifier) == nil)
    }

    @Test func otherSubtypesAndTypesAreKeptNotActedOn() async throws {
        let signer = try NotificationSigner.shared()
        let verifier = try verifier(signer)
        let unknown = try await verifier.verify(
            body: NotificationSigner.body(
                signer.sign(
                    NotificationSigner.payload(subtype: "SOMETHING_NEW", externalPurchaseId: "token-2"))))
        #expect(unknown.action == .keepOnly)
        let reminder = try await verifier.verify(
            body: NotificationSigner.body(
                signer.sign(
                    NotificationSigner.payload(subtype: "ACTIVE_TOKEN_REMINDER", externalPurchaseId: "token-3"))))
        #expect(reminder.action == .recordCustomLinkToken(reminder.token!))
    }

    /// The shipped root is Apple Root CA – G3, by the SHA-256 Apple publishes, and it is the built-in one.
    @Test func theShippedRootIsAppleRootCAG3() throws {
        let pem = try String(contentsOfFile: LinkoutBinary.packageRoot.path + "/config/AppleRootCA-G3.pem", encoding: .utf8)
        func der(_ pem: String) -> Data {
            Data(
                base64Encoded: pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map { $0.trimmingCharacters(in: .whitespaces) }
                    .joined())!
        }
        let hash = SHA256.hash(data: der(pem)).map { String(format: "%02x", $0) }.joined()
        #expect(hash == "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
        let guide = try String(contentsOfFile: LinkoutBinary.packageRoot.path + "/docs/notifications.md", encoding: .utf8)
        #expect(guide.contains("`\(hash)`"), "the notifications guide publishes the fingerprint users can check")
        #expect(hash == AppleRootCA.g3SHA256)
        #expect(der(AppleRootCA.g3PEM) == der(pem))
        _ = try NotificationVerifier(rootsPEM: [AppleRootCA.g3PEM], apps: Self.apps)
    }

    /// Apple's Python library, trusting the test root, accepts what linkout accepts and decodes the same
    /// token fields; it refuses the forgeries too.
    @Test func applesLibraryAgrees() async throws {
        let signer = try NotificationSigner.shared()
        let verifier = try verifier(signer)
        let valid = [
            signer.sign(NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "prod-token")),
            signer.sign(NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "SANDBOX_token")),
            signer.sign(
                NotificationSigner.payload(
                    subtype: "CREATED", externalPurchaseId: "custom", tokenType: "SERVICES", expiration: TokenBuilder.nowMs + 86_400_000)),
            signer.sign(NotificationSigner.payload(subtype: "SOMETHING_NEW", externalPurchaseId: "other")),
        ]
        let forged = [
            signer.sign(NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "x"), chain: .otherRoot),
            signer.sign(NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "x"), chain: .leafWithoutOID),
            signer.sign(NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "x"), tamper: true),
        ]
        let verdicts = try signer.appleLibraryVerdicts(valid + forged)
        #expect(verdicts.count == valid.count + forged.count)
        for (jws, verdict) in zip(valid, verdicts) {
            #expect(verdict["ok"] as? Bool == true, "\(verdict)")
            let ours = try await verifier.verify(body: NotificationSigner.body(jws))
            let token = verdict["externalPurchaseToken"] as? [String: Any]
            #expect(token?["externalPurchaseId"] as? String == ours.token?.externalPurchaseId)
            #expect((token?["tokenCreationDate"] as? NSNumber)?.int64Value == ours.token?.tokenCreationDate)
            #expect((token?["appAppleId"] as? NSNumber)?.int64Value == ours.token?.appAppleId)
            #expect(token?["bundleId"] as? String == ours.token?.bundleId)
            #expect(verdict["notificationUUID"] as? String == ours.notificationUUID)
            #expect(verdict["subtype"] as? String == ours.subtype)
            #expect((verdict["signedDate"] as? NSNumber)?.int64Value == ours.signedDate)
        }
        for verdict in verdicts.dropFirst(valid.count) {
            #expect(verdict["ok"] as? Bool == false, "\(verdict)")
        }
    }

    // MARK: Screening and the verdict cache

    func screenRefusal(_ body: [UInt8], _ verifier: NotificationVerifier) -> NotificationRefusal.Reason? {
        do throws(NotificationRefusal) {
            _ = try verifier.screen(body: body)
            return nil
        } catch {
            return error.reason
        }
    }

    /// What the loop refuses by itself, without a signature: every broken shape, a foreign chain (its
    /// intermediate names another root), and Apple's OIDs; what it passes on needs the signatures checked.
    @Test func theScreenRefusesWhatNeedsNoSignatureAndPassesTheRest() async throws {
        let signer = try NotificationSigner.shared()
        let verifier = try verifier(signer, cache: 0)
        let payload = NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "screened")
        #expect(screenRefusal(Array(#"{"signedPayload": "eyJhbGciOiJFUzI1NiJ9.e30.AAAA"}"#.utf8), verifier) == .malformedJWS)
        #expect(screenRefusal(NotificationSigner.body(signer.sign(payload, chain: .otherRoot)), verifier) == .untrustedChain)
        #expect(screenRefusal(NotificationSigner.body(signer.sign(payload, chain: .leafWithoutOID)), verifier) == .leafOIDMissing)
        #expect(screenRefusal(NotificationSigner.body(signer.sign(payload, chain: .expiredLeaf)), verifier) == .untrustedChain)
        // A valid chain, and a valid chain under a forged signature, both need the signatures checked.
        #expect(try verifier.screen(body: NotificationSigner.body(signer.sign(payload))).needsChainVerification)
        #expect(try verifier.screen(body: NotificationSigner.body(signer.sign(payload, tamper: true))).needsChainVerification)
        // An intermediate that names the root but was signed by another key is right by every name: only its
        // signature tells, so it passes the screen and is refused by the verification.
        let forged = NotificationSigner.body(signer.sign(payload, chain: .forgedIntermediate))
        #expect(try verifier.screen(body: forged).needsChainVerification)
        #expect(await refusal(forged, verifier) == .untrustedChain)
    }

    /// A chain verified once is not verified again, and its verdict is the same as a fresh one's, for every
    /// refusal and for the valid ones, the JWS signature still checked each time.
    @Test func aChainsVerdictIsReusedAndIsTheSameAsAFreshOne() async throws {
        let signer = try NotificationSigner.shared()
        let cached = try verifier(signer)
        let fresh = try verifier(signer, cache: 0)
        func payload(_ id: String = "token-1", bundleId: String = "com.example") -> [String: Any] {
            NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: id, bundleId: bundleId)
        }
        let bodies: [[UInt8]] = [
            signer.sign(payload()), signer.sign(payload(), tamper: true), signer.sign(payload(), chain: .otherRoot),
            signer.sign(payload(), chain: .leafWithoutOID), signer.sign(payload(), chain: .intermediateWithoutOID),
            signer.sign(payload(), chain: .expiredLeaf), signer.sign(payload(bundleId: "com.other")), signer.sign(payload(), alg: "ES384"),
            signer.sign(payload(), chain: .forgedIntermediate),
        ].map(NotificationSigner.body)
        for round in 0..<3 {
            for (index, body) in bodies.enumerated() {
                #expect(await refusal(body, cached) == (await refusal(body, fresh)), "body \(index), round \(round)")
            }
        }
        let again = try cached.screen(body: NotificationSigner.body(signer.sign(payload("token-2"))))
        #expect(!again.needsChainVerification, "the valid chain's verdict is cached")
        #expect(try cached.verifyKnownChain(again)?.token?.externalPurchaseId == "token-2")
        #expect(!(try cached.screen(body: NotificationSigner.body(signer.sign(payload("token-3"), tamper: true))).needsChainVerification))
        #expect(await refusal(NotificationSigner.body(signer.sign(payload("token-3"), tamper: true)), cached) == .badSignature)
    }

    /// A verdict holds only for times at which none of its certificates changes validity: the same valid
    /// chain, signed at a time its leaf did not exist yet, is judged afresh and refused.
    @Test func aCachedVerdictIsNotReusedOutsideItsCertificatesValidity() async throws {
        let signer = try NotificationSigner.shared()
        let verifier = try verifier(signer)
        #expect(
            await refusal(
                NotificationSigner.body(signer.sign(NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "now"))), verifier
            ) == nil)
        let old = NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: "then", signedDate: 946_684_800_000)
        #expect(await refusal(NotificationSigner.body(signer.sign(old)), verifier) == .untrustedChain)
    }
}
