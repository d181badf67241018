/// The query linkout puts on a destination URL: `name=value` pairs joined by `&`. Linkout's own parameters
/// (`CheckoutParameters`) and the shopper's passed-through ones (`PassThrough`) are added through the same
/// `add`, so they are joined one way. Values are added already encoded.
///
/// The query is written out once, into the Location's own bytes (`LocationTemplate`): appending to a
/// `String` or an array first cost an allocation and some 1,000 instructions a request. The first pair is
/// kept as it came: with the default parameters a Location carries exactly one (`externalPurchaseId`),
/// which then needs nothing else. Later pairs are rarer (more of linkout's parameters, or the shopper's
/// passed through) and are joined as they come.
public struct CheckoutQuery: Sendable {
    // Not an optional pair: Swift destroys an optional struct through its generic runtime functions.
    private var firstName = ""
    private var firstValue = ""
    /// `&name=value` for each pair after the first.
    private var rest = ""
    public private(set) var isEmpty = true

    public init() {}

    public mutating func add(_ name: String, _ value: String) {
        if isEmpty {
            (firstName, firstValue, isEmpty) = (name, value, false)
        } else {
            rest += "&" + name + "=" + value
        }
    }

    /// `name=value` pairs joined by `&`.
    public var text: String {
        String(unsafeUninitializedCapacity: count) { write(into: UnsafeMutableRawBufferPointer($0)) }
    }

    /// The length of `text`, in bytes.
    var count: Int {
        isEmpty ? 0 : firstName.utf8.count + 1 + firstValue.utf8.count + rest.utf8.count
    }

    /// Writes `text` at the start of `output`, which has room for `count` bytes; returns `count`.
    func write(into output: UnsafeMutableRawBufferPointer) -> Int {
        guard !isEmpty else { return 0 }
        var written = Self.copy(firstName, into: output)
        output[written] = UInt8(ascii: "=")
        written += 1
        written += Self.copy(firstValue, into: UnsafeMutableRawBufferPointer(rebasing: output[written...]))
        written += Self.copy(rest, into: UnsafeMutableRawBufferPointer(rebasing: output[written...]))
        return written
    }

    /// Copies a string's UTF-8 from its storage in one go: the number of bytes copied.
    private static func copy(_ text: String, into output: UnsafeMutableRawBufferPointer) -> Int {
        if let count = text.utf8.withContiguousStorageIfAvailable({
            output.copyBytes(from: $0)
            return $0.count
        }) {
            return count
        }
        output.copyBytes(from: text.utf8)
        return text.utf8.count
    }

    /// Linkout's own parameters, in a fixed order, as the link's `parameters` ask: the id (or the signed
    /// reference, or both), the country, the link, the raw token.
    static func linkouts(
        _ options: CheckoutParameters, externalPurchaseId id: String, signer: SignedReference?, nowMs: Int64,
        link: String, country: String, tokenJSON: @autoclosure () -> [UInt8]
    ) -> CheckoutQuery {
        var query = CheckoutQuery()
        if options.externalPurchaseId { query.add(options.externalPurchaseIdName, id) }
        if options.signedReference, let signer {
            query.add("linkoutRef", signer.reference(externalPurchaseId: id, seenAtMs: nowMs, link: link, country: country))
        }
        if options.country { query.add("country", country) }
        if options.link { query.add("link", link) }
        if options.token { query.add("externalPurchaseToken", TokenBase64.encodeURLSafe(tokenJSON())) }
        return query
    }

    /// Linkout's parameters for a tap on a link that expects no token: those that need none, the country
    /// and the link, in the same order. The id, the signed reference (which signs the id) and the token
    /// have nothing to carry.
    static func taps(_ options: CheckoutParameters, link: String, country: String) -> CheckoutQuery {
        var query = CheckoutQuery()
        if options.country { query.add("country", country) }
        if options.link { query.add("link", link) }
        return query
    }
}
