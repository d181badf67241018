/// Why a notification was refused (400): the reason is a stable code for logs and metrics, the detail says
/// more for the operator's log and is never sent back.
public struct NotificationRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable, CaseIterable {
        /// The body is not JSON `{"signedPayload": "..."}`.
        case malformedBody = "malformed_body"
        /// signedPayload is not three base64url parts, or its header or payload is not a JSON object.
        case malformedJWS = "malformed_jws"
        case wrongAlgorithm = "wrong_alg"
        /// x5c missing or not exactly three certificates.
        case certificateCount = "x5c_count"
        /// A certificate in x5c that is not DER X.509 in base64.
        case badCertificate = "bad_certificate"
        /// No chain from the leaf through the intermediate to a trusted root at signedDate (another root,
        /// an expired or not yet valid certificate, a broken signature on a certificate, a CA flag missing).
        case untrustedChain = "untrusted_chain"
        case intermediateOIDMissing = "intermediate_oid_missing"
        case leafOIDMissing = "leaf_oid_missing"
        /// The JWS signature does not verify with the leaf's key (or the key is not P-256).
        case badSignature = "bad_signature"
        /// Members missing or of the wrong kind (notificationUUID, signedDate, the token's fields).
        case malformedPayload = "malformed_payload"
        /// A bundleId none of the config's apps has.
        case unknownApp = "unknown_app"
        /// A production notification whose appAppleId is not the app's.
        case wrongAppAppleId = "wrong_app_apple_id"

        // The gateway's refusals around the verifier (never thrown by it): each is counted under the same
        // metric and logged the same way, so one series shows everything turned away on the path.

        /// The client sent more notifications than `notifications.rateLimit` allows (429).
        case rateLimited = "rate_limited"
        /// The intake's queue was full (503 with Retry-After; Apple retries).
        case busy
        /// `notifications.verificationsPerSecond` were spent: no signature checked (503 with Retry-After).
        case verificationsLimited = "verifications_limited"
        /// `notifications.newChainsPerSecond` were spent: a chain not seen before is not checked now (503
        /// with Retry-After).
        case newChainsLimited = "new_chains_limited"
        /// A body over `notifications.maxBodyBytes` (413, never read).
        case bodyTooLarge = "body_too_large"
        /// The body did not arrive within `notifications.bodyTimeoutSeconds` of its head (connection closed).
        case slowBody = "slow_body"
    }

    public var reason: Reason
    public var detail: String

    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(reason.rawValue): \(detail)" }
}
