/// A request head as `RequestHeadParser` found it: what the connection and the route need, as byte
/// offsets into the buffer given to `parse` (no copies, no strings). A header the parser does not name
/// here is checked and skipped.
public struct RequestHead: Sendable, Equatable {
    // Kept compact: the head is copied several times per request on the way from the parser to the
    // responder (into the request, its context, the connection's slot), and at about 120 bytes rather than
    // 330 a copy is a few register moves instead of a call to memcpy (callgrind: memcpy was a tenth of the
    // loop's instructions). So the offsets are 32-bit (`HeadSpan`) and the version a byte.

    /// The Content-Length, 0 if absent. The parser refuses none: whether the route takes a body is the
    /// route's business.
    public var contentLength = 0
    /// The head's length in bytes, its final CRLF CRLF included: where a body, or the next pipelined
    /// request, starts.
    public var headLength = 0
    @HeadSpan private var storedTarget: Range<Int>? = 0..<0
    /// The origin-form target (`/path?query`), as sent: nothing decoded.
    public var target: Range<Int> {
        get { storedTarget ?? 0..<0 }
        set { storedTarget = newValue }
    }
    // Field values, with leading and trailing spaces and tabs trimmed; nil when the header is absent.
    /// Host (at most one: a second is refused).
    @HeadSpan public var host: Range<Int>?
    /// User-Agent (at most one).
    @HeadSpan public var userAgent: Range<Int>?
    /// Purpose (at most one): `prefetch` from browsers that prefetch a link.
    @HeadSpan public var purpose: Range<Int>?
    /// Sec-Purpose (at most one): `prefetch` or `prefetch;prerender`.
    @HeadSpan public var secPurpose: Range<Int>?
    /// Accept-Language: a list, so a repeated header is allowed and the last one is kept.
    @HeadSpan public var acceptLanguage: Range<Int>?
    /// Authorization (at most one).
    @HeadSpan public var authorization: Range<Int>?
    /// Content-Type (at most one).
    @HeadSpan public var contentType: Range<Int>?
    /// Stripe-Signature and Paddle-Signature: a payment provider's webhook signature (the last one if
    /// repeated; only the signature check reads them, over the body).
    @HeadSpan public var stripeSignature: Range<Int>?
    @HeadSpan public var paddleSignature: Range<Int>?
    /// The first of the parser's configured extra headers (`RequestHeadParser.init`'s
    /// `extraHeaders[0]`); if repeated, the last one.
    @HeadSpan public var extra0: Range<Int>?
    /// The second configured extra header (`extraHeaders[1]`); if repeated, the last one.
    @HeadSpan public var extra1: Range<Int>?
    private var storedMinorVersion: UInt8 = 1
    /// 1 for HTTP/1.1, 0 for HTTP/1.0 (the only versions accepted).
    public var minorVersion: Int {
        get { Int(storedMinorVersion) }
        set { storedMinorVersion = UInt8(truncatingIfNeeded: newValue) }
    }
    /// The method, one of the known ones.
    public var method = HTTPMethod.get
    /// Whether the connection may carry another request after this one: for HTTP/1.1 unless a Connection
    /// header holds the token `close`, for HTTP/1.0 only if one holds `keep-alive` (and none `close`).
    public var keepAlive = true
    /// `Expect: 100-continue`: the client waits for a `100 Continue` before it sends the body.
    public var expectsContinue = false

    /// An empty head, filled in by the parser as it reads (public for fuzz-head, whose naive second reading
    /// of the rules builds the head it expects the same way).
    public init() {}
}

/// Where a field's value lies in the head, in 8 bytes rather than an optional range's 17 (24 in a struct):
/// a head is at most tens of kilobytes, far inside 32-bit offsets. A lower bound of `UInt32.max` stands for
/// no such field.
@propertyWrapper
public struct HeadSpan: Sendable, Equatable {
    private var lower = UInt32.max
    private var upper = UInt32.max

    public init(wrappedValue: Range<Int>?) {
        self.wrappedValue = wrappedValue
    }

    public var wrappedValue: Range<Int>? {
        get { lower == .max ? nil : Int(lower)..<Int(upper) }
        set {
            // A head's offsets always fit; clamped all the same, so a bad caller cannot trap the server.
            lower = newValue.map { UInt32(clamping: $0.lowerBound) } ?? .max
            upper = newValue.map { UInt32(clamping: $0.upperBound) } ?? .max
        }
    }
}
