import Crypto
import Foundation
import LinkOutCore
import Testing
import LinkOutTestSupport

/// linkout's verifier against notifications signed by the tests' chain (NotificationSigner): every property
/// Apple's documentation says to check, each broken on its own; and Apple's own Python library on the same
/// notifications, as a verifier nobody here wrote.
@Suite struct NotificationVerifierTests {
    static let apps = [AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890)]

    func verifier(_ signer: NotificationSigner) throws -> NotificationVerifier {
        try NotificationVerifier(rootsPEM: [String(contentsOfFile: signer.rootPEM, encoding: .utf8)], apps: Self.apps)
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
        #expect(verified.token == ExternalPurchaseToken(
            appAppleId: 1_234_567_890, bundleId: "com.example", tokenCreationDate: 1_700_000_000_000, externalPurchaseId: "SANDBOX_custom-1",
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
            ("an intermediate without Apple's OID", NotificationSigner.body(signer.sign(payload(), chain: .intermediateWithoutOID)), .intermediateOIDMissing),
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
        // appAppleId is checked in production only, as Apple's libraries do.
        #expect(await refusal(NotificationSigner.body(signer.sign(payload(appAppleId: 42, id: "SANDBOX_1"))), verifier) == nil)
    }

    @Test func otherSubtypesAndTypesAreKeptNotActedOn() async throws {
        let signer = try NotificationSigner.shared()
        let verifier = try verifier(signer)
        let unknown = try await verifier.verify(body: NotificationSigner.body(signer.sign(
            NotificationSigner.payload(subtype: "SOMETHING_NEW", externalPurchaseId: "token-2"))))
        #expect(unknown.action == .keepOnly)
        let reminder = try await verifier.verify(body: NotificationSigner.body(signer.sign(
            NotificationSigner.payload(subtype: "ACTIVE_TOKEN_REMINDER", externalPurchaseId: "token-3"))))
        #expect(reminder.action == .recordCustomLinkToken(reminder.token!))
    }

    /// The shipped root is Apple Root CA – G3, by the SHA-256 Apple publishes, and it is the built-in one.
    @Test func theShippedRootIsAppleRootCAG3() throws {
        let pem = try String(contentsOfFile: LinkoutBinary.packageRoot.path + "/config/AppleRootCA-G3.pem", encoding: .utf8)
        func der(_ pem: String) -> Data {
            Data(base64Encoded: pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map { $0.trimmingCharacters(in: .whitespaces) }.joined())!
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
            signer.sign(NotificationSigner.payload(subtype: "CREATED", externalPurchaseId: "custom", tokenType: "SERVICES", expiration: TokenBuilder.nowMs + 86_400_000)),
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
}
