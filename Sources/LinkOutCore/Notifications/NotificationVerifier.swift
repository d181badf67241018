import Crypto
import Foundation
import SwiftASN1
// The chain is checked at the notification's signedDate, as Apple's own libraries do: a notification
// Apple retries for days must not fail because a certificate expired since it was signed.
@_spi(FixedExpiryValidationTime) import X509

/// Checks an App Store Server Notification V2 the way Apple's own libraries do, before linkout acts on it:
/// JWS header `alg` ES256 and `x5c` of exactly three certificates; the leaf chained through the x5c
/// intermediate to one of the configured roots (Apple Root CA – G3 by default) at the notification's
/// `signedDate`, under RFC 5280's rules (swift-certificates: validity, CA flags, key usage, signatures);
/// Apple's OIDs on the intermediate and the leaf; the JWS signature with the leaf's key; then the app.
/// A notification that fails any of these could have been made by anyone, and would make linkout send
/// reports to Apple in the developer's name.
///
/// As in Apple's libraries, the x5c's third certificate is not trusted for anything: the chain must end at
/// a configured root, whatever the header carries.
public struct NotificationVerifier: Sendable {
    /// Apple's marker extensions: the WWDR intermediate, and the leaf that signs App Store data.
    public static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    public static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    private let roots: [Certificate]
    private let apps: [String: AllowedApp]

    /// - Throws: `RootError` when a PEM is not a certificate.
    public init(rootsPEM: [String], apps: [AllowedApp]) throws {
        var roots: [Certificate] = []
        for (index, pem) in rootsPEM.enumerated() {
            do { roots.append(try Certificate(pemEncoded: pem)) } catch {
                throw RootError(index: index, message: "\(error)")
            }
        }
        self.roots = roots
        self.apps = Dictionary(apps.map { ($0.bundleId, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public struct RootError: Error, CustomStringConvertible {
        public var index: Int
        public var message: String
        public var description: String { "root certificate \(index + 1) is not a PEM certificate: \(message)" }
    }

    /// Verifies the request body `{"signedPayload": "..."}`. Async because swift-certificates' chain
    /// building is; it does no I/O.
    public func verify(body: [UInt8]) async throws(NotificationRefusal) -> VerifiedNotification {
        guard case .object(let members)? = try? JSONValue.parse(body), case .string(let jws)? = members.value("signedPayload") else {
            throw NotificationRefusal(.malformedBody, "the body is not a JSON object with a signedPayload string")
        }
        return try await verify(signedPayload: jws)
    }

    public func verify(signedPayload jws: String) async throws(NotificationRefusal) -> VerifiedNotification {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = TokenBase64.decode(parts[0].utf8), let payloadBytes = TokenBase64.decode(parts[1].utf8),
              let signature = TokenBase64.decode(parts[2].utf8) else {
            throw NotificationRefusal(.malformedJWS, "signedPayload is not three base64url parts")
        }
        guard case .object(let header)? = try? JSONValue.parse(headerBytes) else {
            throw NotificationRefusal(.malformedJWS, "the JWS header is not a JSON object")
        }
        guard case .object(let payload)? = try? JSONValue.parse(payloadBytes) else {
            throw NotificationRefusal(.malformedJWS, "the JWS payload is not a JSON object")
        }
        guard case .string("ES256")? = header.value("alg") else {
            throw NotificationRefusal(.wrongAlgorithm, "alg is \(header.value("alg")?.text ?? "missing"), not ES256")
        }
        guard case .array(let x5c)? = header.value("x5c"), x5c.count == 3 else {
            let count = if case .array(let list)? = header.value("x5c") { "\(list.count) certificates" } else { "no x5c" }
            throw NotificationRefusal(.certificateCount, "x5c must hold exactly 3 certificates (leaf, intermediate, root); it has \(count)")
        }
        var certificates: [Certificate] = []
        for (index, entry) in x5c.enumerated() {
            // x5c is standard base64 (RFC 7515 4.1.6), not base64url.
            guard case .string(let text) = entry, let der = TokenBase64.decode(text.utf8),
                  let certificate = try? Certificate(derEncoded: der) else {
                throw NotificationRefusal(.badCertificate, "x5c[\(index)] is not a base64 DER certificate")
            }
            certificates.append(certificate)
        }
        guard case .integer(let signedDate)? = payload.value("signedDate") else {
            throw NotificationRefusal(.malformedPayload, "signedDate is missing or not an integer")
        }
        let leaf = certificates[0]
        let intermediate = certificates[1]
        try await verifyChain(leaf: leaf, intermediate: intermediate, at: signedDate)

        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            throw NotificationRefusal(.badSignature, "the leaf's key is not a P-256 key")
        }
        guard signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
              key.isValidSignature(ecdsa, for: Array("\(parts[0]).\(parts[1])".utf8)) else {
            throw NotificationRefusal(.badSignature, "the JWS signature does not verify with the leaf's key")
        }
        return try decode(payload, json: String(decoding: payloadBytes, as: UTF8.self), signedDate: signedDate)
    }

    private func verifyChain(leaf: Certificate, intermediate: Certificate, at signedDate: Int64) async throws(NotificationRefusal) {
        let time = Date(timeIntervalSince1970: Double(signedDate) / 1000)
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) { RFC5280Policy(fixedExpiryValidationTime: time) }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        guard case .validCertificate(let chain) = result else {
            var why = "no chain from the leaf through x5c[1] to a trusted root at signedDate \(signedDate)"
            if case .couldNotValidate(let failures) = result, let first = failures.first {
                why += " (\(first.policyFailureReason))"
            }
            throw NotificationRefusal(.untrustedChain, why)
        }
        let path = Array(chain)
        // Exactly leaf -> the x5c intermediate -> a root: a leaf signed by a root directly is no Apple chain.
        guard path.count == 3, path[1] == intermediate else {
            throw NotificationRefusal(.untrustedChain, "the chain found is not leaf, x5c[1], root (\(path.count) certificates)")
        }
        guard intermediate.extensions[oid: Self.intermediateOID] != nil else {
            throw NotificationRefusal(.intermediateOIDMissing, "the intermediate lacks Apple's OID 1.2.840.113635.100.6.2.1")
        }
        guard leaf.extensions[oid: Self.leafOID] != nil else {
            throw NotificationRefusal(.leafOIDMissing, "the leaf lacks Apple's OID 1.2.840.113635.100.6.11.1")
        }
    }

    /// The payload's members, and the app checks.
    private func decode(_ payload: [JSONValue.Member], json: String, signedDate: Int64) throws(NotificationRefusal) -> VerifiedNotification {
        guard case .string(let type)? = payload.value("notificationType"), !type.isEmpty else {
            throw NotificationRefusal(.malformedPayload, "notificationType is missing")
        }
        guard case .string(let uuid)? = payload.value("notificationUUID"), (1...128).contains(uuid.utf8.count) else {
            throw NotificationRefusal(.malformedPayload, "notificationUUID is missing")
        }
        var subtype: String?
        switch payload.value("subtype") {
        case .string(let text)?: subtype = text
        case nil, .null?: break
        default: throw NotificationRefusal(.malformedPayload, "subtype is not a string")
        }
        var token: ExternalPurchaseToken?
        var bundleId: String?
        var appAppleId: Int64?
        var environment = TokenEnvironment.production
        if case .object(let object)? = payload.value("externalPurchaseToken") {
            let made = try Self.token(object)
            token = made
            (bundleId, appAppleId, environment) = (made.bundleId, made.appAppleId, made.environment)
        } else if type == NotificationAction.externalPurchaseTokenType {
            throw NotificationRefusal(.malformedPayload, "an EXTERNAL_PURCHASE_TOKEN notification without externalPurchaseToken")
        } else if let data = ["data", "summary", "appData"].lazy.compactMap({ key -> [JSONValue.Member]? in
            if case .object(let object)? = payload.value(key) { object } else { nil }
        }).first {
            // Other types name their app (and environment) in data, summary or appData.
            if case .string(let text)? = data.value("bundleId") { bundleId = text }
            if case .integer(let number)? = data.value("appAppleId") { appAppleId = number }
            if case .string(let text)? = data.value("environment"), text != "Production" { environment = .sandbox }
        }
        if let bundleId {
            guard let app = apps[bundleId] else {
                throw NotificationRefusal(.unknownApp, "bundleId \(bundleId) is none of the config's apps")
            }
            // Apple's libraries check appAppleId in production only: sandbox payloads may lack it.
            if environment == .production, appAppleId != app.appAppleId {
                throw NotificationRefusal(.wrongAppAppleId, "appAppleId \(appAppleId.map(String.init) ?? "missing") is not \(bundleId)'s \(app.appAppleId)")
            }
        }
        return VerifiedNotification(
            notificationType: type, subtype: subtype, notificationUUID: uuid, signedDate: signedDate, environment: environment,
            bundleId: bundleId, token: token, payloadJSON: json)
    }

    private static func token(_ object: [JSONValue.Member]) throws(NotificationRefusal) -> ExternalPurchaseToken {
        guard case .string(let id)? = object.value("externalPurchaseId"), (1...256).contains(id.utf8.count) else {
            throw NotificationRefusal(.malformedPayload, "externalPurchaseToken.externalPurchaseId is missing")
        }
        guard case .integer(let created)? = object.value("tokenCreationDate") else {
            throw NotificationRefusal(.malformedPayload, "externalPurchaseToken.tokenCreationDate is missing or not an integer")
        }
        guard case .string(let bundleId)? = object.value("bundleId") else {
            throw NotificationRefusal(.malformedPayload, "externalPurchaseToken.bundleId is missing")
        }
        var appAppleId: Int64 = 0
        if case .integer(let number)? = object.value("appAppleId") { appAppleId = number }
        var token = ExternalPurchaseToken(appAppleId: appAppleId, bundleId: bundleId, tokenCreationDate: created, externalPurchaseId: id)
        // A type of another shape than Apple's (capitals, digits and '_') is not kept: none has been seen.
        if case .string(let type)? = object.value("tokenType") { token.tokenType = TokenType(rawValue: type) }
        if case .integer(let expiry)? = object.value("tokenExpirationDate") { token.tokenExpirationDate = expiry }
        return token
    }
}

extension [JSONValue.Member] {
    /// The value of the first member named `key`.
    func value(_ key: String) -> JSONValue? {
        first { $0.key == key }?.value
    }
}
