/// The query linkout puts on a destination URL: `name=value` pairs joined by `&`. Linkout's own parameters
/// (`CheckoutParameters`) and the shopper's passed-through ones (`PassThrough`) are added through the same
/// `add`, so they are joined one way. Values are added already encoded.
///
/// Kept as bytes, which `LocationTemplate` copies into the Location in one go: appending `String`s cost
/// some 2,000 instructions a request in the stdlib's general append path.
public struct CheckoutQuery: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {
        // Room for linkout's own parameters (a sandbox id's is 63 bytes) without growing.
        bytes.reserveCapacity(96)
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public mutating func add(_ name: String, _ value: String) {
        if !bytes.isEmpty { bytes.append(UInt8(ascii: "&")) }
        append(name)
        bytes.append(UInt8(ascii: "="))
        append(value)
    }

    /// A string's UTF-8 copied from its storage in one go (appending its `utf8` view went through the
    /// generic, byte-at-a-time path).
    private mutating func append(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: text.utf8)
        }
    }

    /// Linkout's own parameters, in a fixed order, as the link's `parameters` ask: the id (or the signed
    /// reference, or both), the country, the link, the raw token.
    static func linkouts(
        _ options: CheckoutParameters, externalPurchaseId id: String, signer: SignedReference?, nowMs: Int64,
        link: String, country: String, tokenJSON: @autoclosure () -> [UInt8]
    ) -> CheckoutQuery {
        var query = CheckoutQuery()
        if options.externalPurchaseId { query.add("externalPurchaseId", id) }
        if options.signedReference, let signer {
            query.add("linkoutRef", signer.reference(externalPurchaseId: id, seenAtMs: nowMs, link: link, country: country))
        }
        if options.country { query.add("country", country) }
        if options.link { query.add("link", link) }
        if options.token { query.add("externalPurchaseToken", TokenBase64.encodeURLSafe(tokenJSON())) }
        return query
    }
}
