/// The decoded content of an `externalPurchaseToken`, with the fields Apple documents.
///
/// Link-out tokens (from `ExternalPurchaseLink.open()`) carry neither `tokenType` nor
/// `tokenExpirationDate`; custom-link tokens carry both. Other shapes are kept as they come, flagged by
/// `unusualType`.
public struct ExternalPurchaseToken: Sendable, Equatable {
    // The key comes first here (not in the initialiser) only so that the memberwise initialiser Swift
    // synthesises, which the public one calls, has other labels than it (see the extension below).

    /// A UUID, prefixed with `SANDBOX` for sandbox tokens. The token's unique key.
    public var externalPurchaseId: String
    public var appAppleId: Int64
    public var bundleId: String
    /// Unix time in milliseconds.
    public var tokenCreationDate: Int64
    public var tokenType: TokenType?
    /// Unix time in milliseconds.
    public var tokenExpirationDate: Int64?

    /// What is unusual about this token, if anything; nil for the shapes Apple documents (a link-out token
    /// with neither field, a custom-link token of a known type with its expiry). An unknown type wins over
    /// a missing field: it is the likelier sign that Apple made something new.
    public var unusualType: UnusualTokenType? {
        if let tokenType {
            if !tokenType.isKnown { return .unknownType }
            return tokenExpirationDate == nil ? .typeWithoutExpiration : nil
        }
        return tokenExpirationDate == nil ? nil : .expirationWithoutType
    }

    /// Sandbox ids start with `SANDBOX`; their reports go to Apple's sandbox endpoint, never mixed.
    public var environment: TokenEnvironment { TokenEnvironment(externalPurchaseId: externalPurchaseId) }
}

// The initialiser is in an extension so that Swift still synthesises the memberwise one, which it calls:
// an initialiser that assigns the fields one by one leaves a copy and a destroy of the whole token behind
// in optimised code (Swift 6.x), a retain and a release of each of its strings, on every request.
extension ExternalPurchaseToken {
    public init(
        appAppleId: Int64, bundleId: String, tokenCreationDate: Int64, externalPurchaseId: String,
        tokenType: TokenType? = nil, tokenExpirationDate: Int64? = nil
    ) {
        self.init(
            externalPurchaseId: externalPurchaseId, appAppleId: appAppleId, bundleId: bundleId,
            tokenCreationDate: tokenCreationDate, tokenType: tokenType, tokenExpirationDate: tokenExpirationDate)
    }
}

public enum TokenEnvironment: String, Sendable, CaseIterable {
    case production
    case sandbox

    /// The rule for every id, a visit's, a notification's or a stored token's: `SANDBOX` first means sandbox.
    public init(externalPurchaseId: String) {
        let utf8 = externalPurchaseId.utf8
        let sandbox =
            utf8.withContiguousStorageIfAvailable { UnsafeRawBufferPointer($0).starts(with: "SANDBOX") }
            ?? utf8.starts(with: "SANDBOX".utf8)
        self = sandbox ? .sandbox : .production
    }
}

/// A custom-link token's `tokenType`, kept exactly as sent.
///
/// Not an enum: Apple adds kinds (iOS 27.2's typed kinds have no published strings yet), and a type
/// linkout does not know must still be recorded and reported, never cost a shopper the checkout. Tokens
/// are unsigned, so refusing unknown types would protect nothing. What is checked is the shape: 1 to 64
/// bytes of `A-Z`, `0-9` and `_`, like every type Apple has named, so nothing else ever reaches the store,
/// a header or a log line.
public struct TokenType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    /// nil when `rawValue` is not 1 to 64 bytes of `A-Z`, `0-9` and `_`.
    public init?(rawValue: String) {
        guard Self.isWellFormed(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(known rawValue: String) {
        self.rawValue = rawValue
    }

    /// EU custom-link tokens.
    public static let acquisition = TokenType(known: "ACQUISITION")
    public static let services = TokenType(known: "SERVICES")
    /// Japan's and Brazil's custom-link tokens.
    public static let inApp = TokenType(known: "IN_APP")
    public static let linkOut = TokenType(known: "LINK_OUT")

    /// The types Apple has documented.
    public static let known: [TokenType] = [.acquisition, .services, .inApp, .linkOut]

    /// Whether Apple has documented this type; an unknown one is recorded all the same, flagged.
    public var isKnown: Bool { Self.known.contains(self) }

    public var description: String { rawValue }

    public static let maximumLength = 64

    public static func isWellFormed(_ text: String) -> Bool {
        (1...maximumLength).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): true
                default: false
                }
            }
    }
}

/// Why a recorded token is out of the ordinary. Such tokens are recorded and reported like any other, and
/// counted (`linkout_unusual_tokens_total{why}`), so an operator sees a new kind of token arrive.
public enum UnusualTokenType: String, Sendable, CaseIterable {
    /// A `tokenType` Apple has not documented (or linkout does not know yet).
    case unknownType = "unknown_type"
    /// A `tokenType` without `tokenExpirationDate`: custom-link tokens documented so far carry both.
    case typeWithoutExpiration = "type_without_expiration"
    /// A `tokenExpirationDate` without `tokenType`: no documented token has this shape either.
    case expirationWithoutType = "expiration_without_type"
}

/// The token's JSON field names, as Apple spells them.
public enum TokenField: String, Sendable, CaseIterable {
    case appAppleId
    case bundleId
    case tokenCreationDate
    case externalPurchaseId
    case tokenType
    case tokenExpirationDate
}
