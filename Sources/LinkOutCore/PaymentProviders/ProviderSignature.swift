import Crypto

/// A webhook's signature, checked over the bytes received before anything else reads them.
///
/// Both providers sign `<timestamp><separator><raw body>` with HMAC-SHA256 keyed by the endpoint's secret
/// string as it is (`whsec_…`, `pdl_ntfset_…`), hex-encoded:
///
///     Stripe-Signature: t=1700000000,v1=<hex>[,v1=<hex>…][,v0=<hex>]     signed: "<t>.<body>"
///     Paddle-Signature: ts=1700000000;h1=<hex>[;h1=<hex>…]               signed: "<ts>:<body>"
///
/// During a rotation each provider sends one signature per active secret, and linkout may hold both the
/// old and the new secret: every signature is compared with every secret (stripe-python and
/// paddle-python-sdk do the same; paddle-node-sdk keeps only the last `h1`, which breaks rotation). Test
/// mode adds Stripe's `v0`, which is never trusted. Comparisons run in constant time over the hex text.
/// A timestamp older than `tolerance` is refused (a replay), and so is one further ahead than it (a clock
/// that far off is wrong, and a signature from the future would stay fresh for longer than meant).
public enum ProviderSignature {
    public enum Problem: String, Sendable, Error, Equatable {
        /// No signature header at all.
        case missing = "missing_signature"
        /// The header does not parse: no timestamp, or no signature of the scheme linkout trusts.
        case malformed = "malformed_signature"
        /// No signature matches any secret.
        case mismatch = "bad_signature"
        /// A matching signature, but its timestamp is outside the tolerance.
        case stale = "stale_signature"
    }

    public struct Parsed: Sendable, Equatable {
        public var timestamp: Int64
        public var signatures: [String]
    }

    /// Reads the header: the timestamp and the signatures of the trusted scheme (Stripe `v1`, Paddle `h1`).
    public static func parse(_ header: String, provider: PaymentProvider) -> Parsed? {
        let (separator, timestampKey, scheme): (Character, Substring, Substring) =
            switch provider {
            case .stripe: (",", "t", "v1")
            case .paddle: (";", "ts", "h1")
            }
        var timestamp: Int64?
        var signatures: [String] = []
        for item in header.split(separator: separator, omittingEmptySubsequences: true) {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let key = pair[0].trimmingSpaces
            let value = pair[1].trimmingSpaces
            if key == timestampKey {
                guard timestamp == nil, !value.isEmpty, value.count <= 12, value.allSatisfy(\.isASCIIDigit) else { return nil }
                timestamp = Int64(value)
            } else if key == scheme {
                signatures.append(String(value))
            }
        }
        guard let timestamp, !signatures.isEmpty else { return nil }
        return Parsed(timestamp: timestamp, signatures: signatures)
    }

    /// Checks `header` against `body` with each of `secrets`; `now` and the tolerance in seconds.
    public static func verify(
        header: String?, body: [UInt8], secrets: [String], provider: PaymentProvider, now: Int64, toleranceSeconds: Int64
    ) -> Result<Int64, Problem> {
        guard let header, !header.isEmpty else { return .failure(.missing) }
        guard let parsed = parse(header, provider: provider) else { return .failure(.malformed) }
        var matched = false
        for secret in secrets {
            let expected = signature(body: body, timestamp: parsed.timestamp, secret: secret, provider: provider)
            // Every pair is compared, matched or not, so the time taken says nothing about which matched.
            for candidate in parsed.signatures where constantTimeEquals(expected, candidate) { matched = true }
        }
        guard matched else { return .failure(.mismatch) }
        guard abs(now - parsed.timestamp) <= toleranceSeconds else { return .failure(.stale) }
        return .success(parsed.timestamp)
    }

    /// The hex signature the provider computes for `body` at `timestamp`.
    public static func signature(body: [UInt8], timestamp: Int64, secret: String, provider: PaymentProvider) -> String {
        var signed = Array(String(timestamp).utf8)
        signed.append(provider == .stripe ? UInt8(ascii: ".") : UInt8(ascii: ":"))
        signed += body
        let code = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Array(secret.utf8)))
        return code.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        }.joined()
    }

    /// A whole header, as the provider would send it, for one signature per secret (tests and tools).
    public static func header(body: [UInt8], timestamp: Int64, secrets: [String], provider: PaymentProvider) -> String {
        let signatures = secrets.map { signature(body: body, timestamp: timestamp, secret: $0, provider: provider) }
        switch provider {
        case .stripe: return (["t=\(timestamp)"] + signatures.map { "v1=\($0)" }).joined(separator: ",")
        case .paddle: return (["ts=\(timestamp)"] + signatures.map { "h1=\($0)" }).joined(separator: ";")
        }
    }

    /// Equal length and bytes, in time that depends on the length only.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
