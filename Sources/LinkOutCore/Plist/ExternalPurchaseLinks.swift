/// The two Info.plist keys that list an app's external-purchase link URLs, as found in the file.
///
/// Kept as found rather than as valid-or-nothing: a country whose value is a number, or an array holding a
/// date, is recorded with the kind of value it is, so the linter can say exactly which entry is wrong and
/// what it holds instead of refusing the whole file.
public struct ExternalPurchaseLinks: Sendable, Equatable {
    public static let singleKey = "SKExternalPurchaseLink"
    public static let multiKey = "SKExternalPurchaseMultiLink"

    /// `SKExternalPurchaseLink`: country -> one URL string. Nil when the key is absent.
    public var single: PlistDictionary<PlistString>?
    /// `SKExternalPurchaseMultiLink` (iOS 17.5+): country -> an array of 1 to 5 URL strings. Nil when absent.
    public var multi: PlistDictionary<PlistStringArray>?

    public init(single: PlistDictionary<PlistString>? = nil, multi: PlistDictionary<PlistStringArray>? = nil) {
        self.single = single
        self.multi = multi
    }

    /// Well-typed links, as the generator builds them and as tests write them.
    public init(links: [String: String]?, multiLinks: [String: [String]]?) {
        single = links.map { .dictionary($0.mapValues { .string($0) }) }
        multi = multiLinks.map { .dictionary($0.mapValues { .array($0.map { .string($0) }) }) }
    }
}

/// A plist value where a string is expected, or the kind of value found there instead.
public enum PlistString: Sendable, Equatable {
    case string(String)
    /// Another kind of value: `integer`, `real`, `boolean`, `date`, `data`, `array` or `dictionary`.
    case other(kind: String)
}

/// A plist value where an array of strings is expected, or the kind of value found there instead.
public enum PlistStringArray: Sendable, Equatable {
    case array([PlistString])
    case other(kind: String)
}

/// A plist value where a dictionary is expected, or the kind of value found there instead.
public enum PlistDictionary<Value: Sendable & Equatable>: Sendable, Equatable {
    case dictionary([String: Value])
    case other(kind: String)
}
