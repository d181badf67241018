import Crypto

/// `linkoutRef`: proof for the checkout that a visit came through linkout, which recorded its token
/// before redirecting, and that nobody edited the parameters on the way.
///
///     linkoutRef = v1.<externalPurchaseId>.<seen at, Unix seconds>.<link id>.<country>.<signature>
///     signature  = base64url, unpadded, of HMAC-SHA256(secret, everything before the last ".")
///
/// No field can hold a dot (ids are hex, dashes and `SANDBOX_`; link ids and countries are checked at
/// load), so the checkout splits at the last dot, recomputes the HMAC over the first part with the same
/// secret, compares in constant time, and checks the age it accepts. README shows a check in a few
/// lines of Python. HMAC-SHA256 comes from swift-crypto (BoringSSL on Linux), not hand-written code.
public struct SignedReference: Sendable {
    /// The bytes rather than a `SymmetricKey`, which is not `Sendable`; making the key per reference
    /// is one small copy.
    private let secret: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: secret) }

    /// Secrets shorter than this are refused at load: HMAC's strength is bounded by the key's.
    public static let minimumSecretBytes = 32

    public init(secret: [UInt8]) {
        self.secret = secret
    }

    public func reference(externalPurchaseId: String, seenAtMs: Int64, link: String, country: String) -> String {
        let message = "v1.\(externalPurchaseId).\(seenAtMs / 1000).\(link).\(country)"
        return message + "." + TokenBase64.encodeURLSafe(authenticationCode(Array(message.utf8)))
    }

    func authenticationCode(_ message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }

    /// The check a checkout makes, for tests and for `linkout` itself: the fields when the signature is
    /// right.
    public func verify(_ reference: String) -> (externalPurchaseId: String, seenAtSeconds: Int64, link: String, country: String)? {
        guard let dot = reference.lastIndex(of: ".") else { return nil }
        let message = reference[..<dot]
        guard let signature = TokenBase64.decode(Array(reference[reference.index(after: dot)...].utf8)),
            HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Array(message.utf8), using: key)
        else { return nil }
        let fields = message.split(separator: ".", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[0] == "v1", let seenAt = Int64(fields[2]) else { return nil }
        return (String(fields[1]), seenAt, String(fields[3]), String(fields[4]))
    }
}
