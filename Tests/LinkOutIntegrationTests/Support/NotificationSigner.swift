import Crypto
import Foundation
import LinkOutTestSupport

/// Signs App Store Server Notifications V2 as Apple does (a JWS, ES256, x5c of leaf, intermediate and root),
/// with a test chain made once per process by `notification_chain.py`: linkout is configured to trust its
/// root (`rootPEM`). Every broken property the verifier must refuse is one argument away.
///
/// ```swift
/// let signer = try NotificationSigner.shared()
/// let payload = NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: id)
/// let jws = signer.sign(payload)                           // valid
/// let forged = signer.sign(payload, chain: .otherRoot)     // a chain to another root
/// ```
final class NotificationSigner: @unchecked Sendable {  // never changes after init
    /// Which certificates go in x5c, and which key signs.
    enum Chain {
        case valid, otherRoot, leafWithoutOID, expiredLeaf, intermediateWithoutOID, twoCertificates
        /// An intermediate with the root's name as issuer, signed by another key: right by every name.
        case forgedIntermediate
    }

    let folder = TemporaryFolder()
    /// The test root, PEM (for linkout's `notifications.rootCertificates`) and DER (for Apple's library).
    var rootPEM: String { folder.file("root.pem") }
    var rootDER: String { folder.file("root.der") }
    private let leafKey: P256.Signing.PrivateKey
    private let otherLeafKey: P256.Signing.PrivateKey

    private init() throws {
        let chain = try Command.python(
            [LinkoutBinary.packageRoot.path + "/Tests/LinkOutIntegrationTests/Support/notification_chain.py", folder.path])
        guard chain.status == 0 else {
            throw SignerError(description: "notification_chain.py failed: \(chain.stderr)")
        }
        leafKey = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: folder.file("leaf.key"), encoding: .utf8))
        otherLeafKey = try P256.Signing.PrivateKey(
            pemRepresentation: String(contentsOfFile: folder.file("other-leaf.key"), encoding: .utf8))
    }

    struct SignerError: Error, CustomStringConvertible {
        var description: String
    }

    private static let made = Result { try NotificationSigner() }
    static func shared() throws -> NotificationSigner { try made.get() }

    private func certificate(_ name: String) -> String {
        (try? String(contentsOfFile: folder.file(name + ".b64"), encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    func x5c(_ chain: Chain) -> [String] {
        switch chain {
        case .valid: ["leaf", "intermediate", "root"].map(certificate)
        case .otherRoot: ["other-leaf", "other-intermediate", "other-root"].map(certificate)
        case .leafWithoutOID: ["leaf-no-oid", "intermediate", "root"].map(certificate)
        case .expiredLeaf: ["leaf-expired", "intermediate", "root"].map(certificate)
        case .intermediateWithoutOID: ["leaf-of-plain-intermediate", "intermediate-no-oid", "root"].map(certificate)
        case .twoCertificates: ["leaf", "intermediate"].map(certificate)
        case .forgedIntermediate: ["leaf-of-forged-intermediate", "forged-intermediate", "root"].map(certificate)
        }
    }

    /// The compact JWS of `payload`. `alg` is what the header says (the signature is ES256 whatever it
    /// says); `tamper` changes the payload after signing.
    func sign(_ payload: [String: Any], chain: Chain = .valid, alg: String = "ES256", tamper: Bool = false) -> String {
        let header: [String: Any] = ["alg": alg, "x5c": x5c(chain)]
        let head = Self.base64URL(try! JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        let body = Self.base64URL(try! JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
        let key = chain == .otherRoot ? otherLeafKey : leafKey
        let signature = try! key.signature(for: Data("\(head).\(body)".utf8)).rawRepresentation
        var signed = body
        if tamper {
            var changed = payload
            changed["notificationUUID"] = UUID().uuidString.lowercased()
            signed = Self.base64URL(try! JSONSerialization.data(withJSONObject: changed, options: [.sortedKeys]))
        }
        return "\(head).\(signed).\(Self.base64URL(signature))"
    }

    /// `{"signedPayload": jws}`, the body Apple posts.
    static func body(_ jws: String) -> [UInt8] {
        Array(#"{"signedPayload":"\#(jws)"}"#.utf8)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// An `EXTERNAL_PURCHASE_TOKEN` notification of `subtype` for token `externalPurchaseId`, signed now.
    static func payload(
        subtype: String?, externalPurchaseId: String, type: String = "EXTERNAL_PURCHASE_TOKEN",
        uuid: String = UUID().uuidString.lowercased(),
        created: Int64 = TokenBuilder.nowMs - 10 * 86_400_000, bundleId: String = "com.example", appAppleId: Int64 = 1_234_567_890,
        signedDate: Int64 = Int64(Date().timeIntervalSince1970 * 1000), tokenType: String? = nil, expiration: Int64? = nil
    ) -> [String: Any] {
        var token: [String: Any] = [
            "externalPurchaseId": externalPurchaseId, "tokenCreationDate": created, "appAppleId": appAppleId, "bundleId": bundleId,
        ]
        if let tokenType { token["tokenType"] = tokenType }
        if let expiration { token["tokenExpirationDate"] = expiration }
        var payload: [String: Any] = [
            "notificationType": type, "notificationUUID": uuid, "version": "2.0", "signedDate": signedDate, "externalPurchaseToken": token,
        ]
        if let subtype { payload["subtype"] = subtype }
        return payload
    }

    /// Apple's Python library's verdict on each payload (`apple_verify.py`): decoded fields, or an error.
    func appleLibraryVerdicts(
        _ payloads: [String], bundleId: String = "com.example", appAppleId: Int64 = 1_234_567_890
    ) throws -> [[String: Any]] {
        let result = try Command.python(
            [
                LinkoutBinary.packageRoot.path + "/Tests/LinkOutIntegrationTests/Support/apple_verify.py", rootDER, bundleId,
                String(appAppleId),
            ],
            input: Data(payloads.map { $0 + "\n" }.joined().utf8))
        guard result.status == 0 else {
            throw SignerError(
                description: "apple_verify.py failed (is app-store-server-library installed? scripts/install-deps): \(result.stderr)")
        }
        return result.stdoutText.split(separator: "\n").map {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
        }
    }
}
