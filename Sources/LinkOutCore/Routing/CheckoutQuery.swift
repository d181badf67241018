/// The query linkout puts on a destination URL: `name=value` pairs joined by `&`. Linkout's own parameters
/// (`CheckoutParameters`) and the shopper's passed-through ones (`PassThrough`) are added through the same
/// `add`, so they are joined one way. Values are added already encoded.
///
/// The pairs are kept as they are added and written out once, into the Location's own bytes
/// (`LocationTemplate`): appending them to a `String` or an array first cost an allocation and some 1,000
/// instructions a request. The first pair is kept apart from the others: with the default parameters a
/// Location carries exactly one (`externalPurchaseId`), and then the query needs no array at all.
public struct CheckoutQuery: Sendable {
    /// A struct, not a tuple: Swift copies and destroys optional tuples and arrays of them through its
    /// generic runtime functions.
    private struct Pair {
        var name: String
        var value: String
    }

    private var first: Pair?
    private var others: [Pair] = []

    public init() {}

    public var isEmpty: Bool { first == nil }

    public mutating func add(_ name: String, _ value: String) {
        if first == nil {
            first = Pair(name: name, value: value)
        } else {
            others.append(Pair(name: name, value: value))
        }
    }

    /// `name=value` pairs joined by `&`.
    public var text: String {
        String(unsafeUninitializedCapacity: count) { write(into: UnsafeMutableRawBufferPointer($0)) }
    }

    /// The length of `text`, in bytes.
    var count: Int {
        guard let first else { return 0 }
        return others.reduce(first.name.utf8.count + 1 + first.value.utf8.count) { $0 + 1 + $1.name.utf8.count + 1 + $1.value.utf8.count }
    }

    /// Writes `text` at the start of `output`, which has room for `count` bytes; returns `count`.
    func write(into output: UnsafeMutableRawBufferPointer) -> Int {
        guard let first else { return 0 }
        var written = 0
        func append(_ text: String) {
            written += Self.copy(text, into: UnsafeMutableRawBufferPointer(rebasing: output[written...]))
        }
        func append(_ byte: UInt8) {
            output[written] = byte
            written += 1
        }
        append(first.name)
        append(UInt8(ascii: "="))
        append(first.value)
        for pair in others {
            append(UInt8(ascii: "&"))
            append(pair.name)
            append(UInt8(ascii: "="))
            append(pair.value)
        }
        return written
    }

    /// Copies a string's UTF-8 from its storage in one go: the number of bytes copied.
    private static func copy(_ text: String, into output: UnsafeMutableRawBufferPointer) -> Int {
        if let count = text.utf8.withContiguousStorageIfAvailable({ output.copyBytes(from: $0); return $0.count }) { return count }
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
