/// A notification's body opened without any cryptography: `{"signedPayload": "<header>.<payload>.<signature>"}`
/// split into its parts, each decoded and checked for shape and size. Everything here is cheap (a JSON read
/// and base64 decoding, linear in the body), so it runs first and on the loop thread: a body that fails
/// here costs about what a shopper's redirect costs and never reaches a certificate or a signature.
struct NotificationEnvelope: Sendable {
    /// ES256: r and s, 32 bytes each (RFC 7518 3.4).
    static let signatureBytes = 64
    /// One x5c certificate's DER at most. Apple's are 600–1,100 bytes; a limit keeps a hostile header from
    /// making the certificate parser work through megabytes.
    static let maxCertificateBytes = 8192
    /// The latest `signedDate` a certificate's time can express, 9999-12-31T23:59:59Z: the chain is checked
    /// at signedDate, and swift-certificates traps (`try!`) on a validation time past year 9999, rounding to
    /// the second first (23:59:59.5 is already year 10000). A later one, which anyone can write, must never
    /// reach it.
    static let latestSignedDate: Int64 = 253_402_300_799_000

    /// `<header>.<payload>` as sent: what the signature covers.
    var signingInput: [UInt8]
    var signature: [UInt8]
    /// The x5c certificates' DER, leaf first (exactly three).
    var certificates: [[UInt8]]
    var payload: [JSONValue.Member]
    /// The payload as Apple signed it, kept with the notification.
    var payloadJSON: String
    /// Unix ms, when Apple signed it: the time the chain is checked at.
    var signedDate: Int64

    /// Opens `body`, or says why it is not a notification's.
    static func open(_ body: [UInt8]) throws(NotificationRefusal) -> NotificationEnvelope {
        guard case .object(let members)? = try? JSONValue.parse(body), case .string(let jws)? = members.value("signedPayload") else {
            throw NotificationRefusal(.malformedBody, "the body is not a JSON object with a signedPayload string")
        }
        let parts = jws.utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw NotificationRefusal(.malformedJWS, "signedPayload is not three base64url parts")
        }
        // The signature's length first: 64 bytes are 86 base64url characters (88 padded), and anything else
        // is refused before a byte of the rest is decoded.
        guard parts[2].count <= 88, let signature = TokenBase64.decode(parts[2]), signature.count == signatureBytes else {
            throw NotificationRefusal(.malformedJWS, "the JWS signature is not 64 bytes of base64url (ES256's r and s)")
        }
        guard let headerBytes = TokenBase64.decode(parts[0]), case .object(let header)? = try? JSONValue.parse(headerBytes) else {
            throw NotificationRefusal(.malformedJWS, "the JWS header is not a JSON object in base64url")
        }
        guard case .string("ES256")? = header.value("alg") else {
            throw NotificationRefusal(.wrongAlgorithm, "alg is \(header.value("alg")?.text ?? "missing"), not ES256")
        }
        guard case .array(let x5c)? = header.value("x5c"), x5c.count == 3 else {
            let count = if case .array(let list)? = header.value("x5c") { "\(list.count) certificates" } else { "no x5c" }
            throw NotificationRefusal(.certificateCount, "x5c must hold exactly 3 certificates (leaf, intermediate, root); it has \(count)")
        }
        guard let payloadBytes = TokenBase64.decode(parts[1]), case .object(let payload)? = try? JSONValue.parse(payloadBytes) else {
            throw NotificationRefusal(.malformedJWS, "the JWS payload is not a JSON object in base64url")
        }
        guard case .integer(let signedDate)? = payload.value("signedDate") else {
            throw NotificationRefusal(.malformedPayload, "signedDate is missing or not an integer")
        }
        guard (0...latestSignedDate).contains(signedDate) else {
            throw NotificationRefusal(.malformedPayload, "signedDate \(signedDate) is not a time from 1970 to 9999")
        }
        var certificates: [[UInt8]] = []
        for (index, entry) in x5c.enumerated() {
            // x5c is standard base64 (RFC 7515 4.1.6), not base64url; the length is checked before decoding.
            guard case .string(let text) = entry, text.utf8.count <= (maxCertificateBytes + 2) / 3 * 4,
                let der = TokenBase64.decode(text.utf8), !der.isEmpty
            else {
                throw NotificationRefusal(.badCertificate, "x5c[\(index)] is not base64 DER of at most \(maxCertificateBytes) bytes")
            }
            certificates.append(der)
        }
        let signingInput = Array(jws.utf8[parts[0].startIndex..<parts[1].endIndex])
        return NotificationEnvelope(
            signingInput: signingInput, signature: signature, certificates: certificates, payload: payload,
            payloadJSON: String(decoding: payloadBytes, as: UTF8.self), signedDate: signedDate)
    }
}

extension [JSONValue.Member] {
    /// The value of the first member named `key`.
    func value(_ key: String) -> JSONValue? {
        first { $0.key == key }?.value
    }
}
