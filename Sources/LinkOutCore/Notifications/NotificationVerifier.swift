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
///
/// In two steps, since the public listener takes notifications from anyone: `screen` does every check that
/// needs no signature (the body's shape and sizes, the header, the certificates' names and dates against
/// the roots) and answers from the verdict cache when the chain was judged before, cheaply enough for a loop
/// thread; `verify(_:)` does the signatures, on the intake thread. `verify(body:)` is both.
public struct NotificationVerifier: Sendable {
    /// Apple's marker extensions: the WWDR intermediate, and the leaf that signs App Store data.
    public static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    public static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    /// Chain verdicts kept by default: Apple signs with a handful of leaves at a time, so this is room for
    /// theirs and for many forgeries.
    public static let defaultVerdictCacheCapacity = 1024

    private let roots: NotificationRoots
    private let apps: [String: AllowedApp]
    private let verdicts: ChainVerdictCache

    /// - Parameter verdictCacheCapacity: chain verdicts kept (0: every chain is judged afresh).
    /// - Throws: `RootError` when a PEM is not a certificate.
    public init(rootsPEM: [String], apps: [AllowedApp], verdictCacheCapacity: Int = Self.defaultVerdictCacheCapacity) throws {
        var roots: [Certificate] = []
        for (index, pem) in rootsPEM.enumerated() {
            do { roots.append(try Certificate(pemEncoded: pem)) } catch {
                throw RootError(index: index, message: "\(error)")
            }
        }
        self.roots = NotificationRoots(roots)
        self.apps = Dictionary(apps.map { ($0.bundleId, $0) }, uniquingKeysWith: { first, _ in first })
        self.verdicts = ChainVerdictCache(capacity: verdictCacheCapacity)
    }

    public struct RootError: Error, CustomStringConvertible {
        public var index: Int
        public var message: String
        public var description: String { "root certificate \(index + 1) is not a PEM certificate: \(message)" }
    }

    /// Verifies the request body `{"signedPayload": "..."}`: `screen`, then `verify(_:)`.
    public func verify(body: [UInt8]) async throws(NotificationRefusal) -> VerifiedNotification {
        try await verify(screen(body: body))
    }

    /// Every check that needs no signature, cheapest first: the body's shape, the JWS's parts and sizes,
    /// the header; then the chain's verdict if it is cached, else the certificates parsed and screened by
    /// name and date against the roots (`NotificationRoots`). Never refuses a notification `verify(_:)`
    /// would accept.
    public func screen(body: [UInt8]) throws(NotificationRefusal) -> ScreenedNotification {
        let envelope = try NotificationEnvelope.open(body)
        let key = ChainVerdictCache.Key(envelope.certificates)
        switch verdicts.verdict(key, at: envelope.signedDate) {
        case .trusted(let leafKey)?:
            return ScreenedNotification(envelope: envelope, key: key, chain: .trusted(leafKey))
        case .refused(let refusal)?:
            throw refusal
        case nil:
            break
        }
        // What the names and bytes decide holds at any time: kept as a verdict for all time. The intermediate
        // first, as a forger's chain most often fails on it (an issuer that names no trusted root): then one
        // certificate is parsed, not three.
        func refusedForever(_ refusal: NotificationRefusal) -> NotificationRefusal {
            verdicts.remember(key, .refused(refusal), window: Int64.min...Int64.max, signedDate: envelope.signedDate)
            return refusal
        }
        func certificate(_ index: Int) throws(NotificationRefusal) -> Certificate {
            guard let certificate = try? Certificate(derEncoded: envelope.certificates[index]) else {
                throw refusedForever(NotificationRefusal(.badCertificate, "x5c[\(index)] is not a DER certificate"))
            }
            return certificate
        }
        let intermediate = try certificate(1)
        do { try roots.screenIntermediate(intermediate) } catch { throw refusedForever(error) }
        let leaf = try certificate(0)
        do { try roots.screenLeaf(leaf, issuedBy: intermediate) } catch { throw refusedForever(error) }
        // Never trusted, but it must be a certificate, as in Apple's libraries.
        _ = try certificate(2)
        try roots.screenDates(leaf: leaf, intermediate: intermediate, signedDate: envelope.signedDate)
        return ScreenedNotification(
            envelope: envelope, key: key,
            chain: .unverified(
                leaf: leaf, intermediate: intermediate, window: roots.window(leaf: leaf, intermediate: intermediate)))
    }

    /// The checks `screen` left when the chain's verdict is known (cached when the loop screened it, or
    /// since, by an earlier notification with the same chain): the JWS signature and the payload,
    /// synchronously. Nil when the chain's signatures are still to be checked (`verify(_:)`).
    public func verifyKnownChain(_ screened: ScreenedNotification) throws(NotificationRefusal) -> VerifiedNotification? {
        let envelope = screened.envelope
        switch screened.chain {
        case .trusted(let leafKey):
            return try finish(envelope, leafKey: leafKey)
        case .unverified:
            switch verdicts.verdict(screened.key, at: envelope.signedDate) {
            case .trusted(let leafKey)?: return try finish(envelope, leafKey: leafKey)
            case .refused(let refusal)?: throw refusal
            case nil: return nil
            }
        }
    }

    /// The checks `screen` left: the chain's signatures (unless its verdict is known; the verdict is cached
    /// now), the JWS signature with the leaf's key, and the payload's members and app. Async because
    /// swift-certificates' chain building is; it does no I/O.
    public func verify(_ screened: ScreenedNotification) async throws(NotificationRefusal) -> VerifiedNotification {
        if let verified = try verifyKnownChain(screened) { return verified }
        guard case .unverified(let leaf, let intermediate, let window) = screened.chain else {
            preconditionFailure("verifyKnownChain answers every chain whose verdict is known")
        }
        let envelope = screened.envelope
        let leafKey: ChainVerdictCache.LeafKey
        do {
            leafKey = try await verifyChain(leaf: leaf, intermediate: intermediate, at: envelope.signedDate)
        } catch {
            verdicts.remember(screened.key, .refused(error), window: window, signedDate: envelope.signedDate)
            throw error
        }
        verdicts.remember(screened.key, .trusted(leafKey), window: window, signedDate: envelope.signedDate)
        return try finish(envelope, leafKey: leafKey)
    }

    /// The JWS signature with the leaf's key, then the payload's members and app.
    private func finish(
        _ envelope: NotificationEnvelope, leafKey: ChainVerdictCache.LeafKey
    ) throws(NotificationRefusal) -> VerifiedNotification {
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: envelope.signature),
            leafKey.key.isValidSignature(ecdsa, for: envelope.signingInput)
        else {
            throw NotificationRefusal(.badSignature, "the JWS signature does not verify with the leaf's key")
        }
        return try decode(envelope.payload, json: envelope.payloadJSON, signedDate: envelope.signedDate)
    }

    /// The chain leaf → x5c[1] → a root, verified at `signedDate`; the leaf's key.
    private func verifyChain(
        leaf: Certificate, intermediate: Certificate, at signedDate: Int64
    ) async throws(NotificationRefusal) -> ChainVerdictCache.LeafKey {
        let time = Date(timeIntervalSince1970: Double(signedDate) / 1000)
        var verifier = Verifier(rootCertificates: CertificateStore(roots.certificates)) { RFC5280Policy(fixedExpiryValidationTime: time) }
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
        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            throw NotificationRefusal(.badSignature, "the leaf's key is not a P-256 key")
        }
        return ChainVerdictCache.LeafKey(key: key)
    }

    /// The payload's members, and the app checks.
    private func decode(_ payload: [JSONValue.Member], json: String, signedDate: Int64) throws(NotificationRefusal) -> VerifiedNotification
    {
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
                throw NotificationRefusal(
                    .wrongAppAppleId, "appAppleId \(appAppleId.map(String.init) ?? "missing") is not \(bundleId)'s \(app.appAppleId)")
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
