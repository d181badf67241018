/// One thing wrong with an app's external-purchase link keys: where (a key path such as
/// `SKExternalPurchaseMultiLink.de[1]`, empty for the file as a whole), what kind of problem (a stable code
/// scripts can match on) and a message for people.
public struct PlistFinding: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var code: Code
    public var message: String

    public init(path: String, code: Code, message: String) {
        self.path = path
        self.code = code
        self.message = message
    }

    /// `path: code: message`, the line `linkout plist lint` prints.
    public var description: String {
        path.isEmpty ? "\(code.rawValue): \(message)" : "\(path): \(code.rawValue): \(message)"
    }

    /// The kinds of finding. The raw values are printed and are stable.
    public enum Code: String, Sendable, CaseIterable {
        // MARK: The file's shape

        /// Neither `SKExternalPurchaseLink` nor `SKExternalPurchaseMultiLink` is present.
        case missingKeys = "missing_keys"
        /// A key, country or array element holds another kind of value than the one Apple specifies.
        case wrongType = "wrong_type"
        /// A dictionary with no countries, or a country's array with no URLs.
        case empty = "empty"

        // MARK: Apple's rules

        /// A key that is not a lowercase ISO 3166-1 alpha-2 code.
        case invalidCountry = "invalid_country"
        /// A country code Apple does not accept for external purchase links (`us` unless allowed).
        case notAStorefront = "not_a_storefront"
        /// Not `scheme://host…`.
        case notAbsolute = "not_absolute"
        case notHTTPS = "not_https"
        /// A query: StoreKit appends its own, and Apple forbids one in the plist.
        case hasQuery = "has_query"
        /// Apple does not mention fragments; one would stop the gateway's path from matching.
        case hasFragment = "has_fragment"
        /// Characters outside printable ASCII (or a space).
        case notASCII = "not_ascii"
        /// More than 1,000 characters.
        case tooLong = "too_long"
        /// User information, or a host (and port) that is not a plain host name.
        case invalidHost = "invalid_host"
        /// The same URL twice in one country's array.
        case duplicateLink = "duplicate_link"
        /// More than 5 URLs in an array, or more than 5 different links for a country across both keys.
        case tooManyLinks = "too_many_links"
        /// More than one different link for a country where only one is allowed (all but music-streaming
        /// apps, and those too outside the EU27, Iceland and Norway). Counted across both keys together.
        case multipleLinksNotAllowed = "multiple_links_not_allowed"

        // MARK: The gateway's config

        /// URLs on more than one scheme and host: one gateway normally serves them all.
        case mixedHosts = "mixed_hosts"
        /// A URL whose path is no link the config serves.
        case unknownPath = "unknown_path"
        /// A URL whose path is a link configured for another country than the key it is listed under.
        case wrongCountry = "wrong_country"
        /// A configured link that no URL of its country points at.
        case missingLink = "missing_link"
    }
}
