/// A request head as `RequestHeadParser` found it: what the connection and the route need, as byte
/// offsets into the buffer given to `parse` (no copies, no strings). A header the parser does not name
/// here is checked and skipped.
public struct RequestHead: Sendable, Equatable {
    // Stored compactly, read and written through the properties below: offsets as 32-bit spans, small
    // numbers as bytes. The head is copied several times per request on the way from the parser to the
    // responder (into the request, its context, the slot), and at 120 bytes rather than 330 a copy is a few
    // register moves instead of a call to memcpy (callgrind: memcpy was a tenth of the loop's instructions).
    private var storedContentLength = 0
    private var storedHeadLength = 0
    private var storedTarget = HeadSpan(0..<0)
    private var storedHost = HeadSpan.absent
    private var storedUserAgent = HeadSpan.absent
    private var storedPurpose = HeadSpan.absent
    private var storedSecPurpose = HeadSpan.absent
    private var storedAcceptLanguage = HeadSpan.absent
    private var storedAuthorization = HeadSpan.absent
    private var storedContentType = HeadSpan.absent
    private var storedStripeSignature = HeadSpan.absent
    private var storedPaddleSignature = HeadSpan.absent
    private var storedExtra0 = HeadSpan.absent
    private var storedExtra1 = HeadSpan.absent
    private var storedMinorVersion: UInt8 = 1

    /// The method, one of the known ones.
    public var method: HTTPMethod
    /// The origin-form target (`/path?query`), as sent: nothing decoded.
    public var target: Range<Int> {
        get { storedTarget.range ?? 0..<0 }
        set { storedTarget = HeadSpan(newValue) }
    }
    /// 1 for HTTP/1.1, 0 for HTTP/1.0 (the only versions accepted).
    public var minorVersion: Int {
        get { Int(storedMinorVersion) }
        set { storedMinorVersion = UInt8(truncatingIfNeeded: newValue) }
    }
    /// Whether the connection may carry another request after this one: for HTTP/1.1 unless a Connection
    /// header holds the token `close`, for HTTP/1.0 only if one holds `keep-alive` (and none `close`).
    public var keepAlive: Bool
    /// The Content-Length, 0 if absent. The parser refuses none: whether the route takes a body is the
    /// route's business.
    public var contentLength: Int {
        get { storedContentLength }
        set { storedContentLength = newValue }
    }
    /// The head's length in bytes, its final CRLF CRLF included: where a body, or the next pipelined
    /// request, starts.
    public var headLength: Int {
        get { storedHeadLength }
        set { storedHeadLength = newValue }
    }
    // Field values, with leading and trailing spaces and tabs trimmed; nil when the header is absent.
    /// Host (at most one: a second is refused).
    public var host: Range<Int>? {
        get { storedHost.range }
        set { storedHost = HeadSpan(newValue) }
    }
    /// User-Agent (at most one).
    public var userAgent: Range<Int>? {
        get { storedUserAgent.range }
        set { storedUserAgent = HeadSpan(newValue) }
    }
    /// Purpose (at most one): `prefetch` from browsers that prefetch a link.
    public var purpose: Range<Int>? {
        get { storedPurpose.range }
        set { storedPurpose = HeadSpan(newValue) }
    }
    /// Sec-Purpose (at most one): `prefetch` or `prefetch;prerender`.
    public var secPurpose: Range<Int>? {
        get { storedSecPurpose.range }
        set { storedSecPurpose = HeadSpan(newValue) }
    }
    /// Accept-Language: a list, so a repeated header is allowed and the last one is kept.
    public var acceptLanguage: Range<Int>? {
        get { storedAcceptLanguage.range }
        set { storedAcceptLanguage = HeadSpan(newValue) }
    }
    /// Authorization (at most one).
    public var authorization: Range<Int>? {
        get { storedAuthorization.range }
        set { storedAuthorization = HeadSpan(newValue) }
    }
    /// Content-Type (at most one).
    public var contentType: Range<Int>? {
        get { storedContentType.range }
        set { storedContentType = HeadSpan(newValue) }
    }
    /// Stripe-Signature and Paddle-Signature: a payment provider's webhook signature (the last one if
    /// repeated; only the signature check reads them, over the body).
    public var stripeSignature: Range<Int>? {
        get { storedStripeSignature.range }
        set { storedStripeSignature = HeadSpan(newValue) }
    }
    public var paddleSignature: Range<Int>? {
        get { storedPaddleSignature.range }
        set { storedPaddleSignature = HeadSpan(newValue) }
    }
    /// `Expect: 100-continue`: the client waits for a `100 Continue` before it sends the body.
    public var expectsContinue = false
    /// The first of the parser's configured extra headers (`RequestHeadParser.init`'s
    /// `extraHeaders[0]`); if repeated, the last one.
    public var extra0: Range<Int>? {
        get { storedExtra0.range }
        set { storedExtra0 = HeadSpan(newValue) }
    }
    /// The second configured extra header (`extraHeaders[1]`); if repeated, the last one.
    public var extra1: Range<Int>? {
        get { storedExtra1.range }
        set { storedExtra1 = HeadSpan(newValue) }
    }

    /// An empty head, filled in by the parser as it reads (public for fuzz-head, whose naive second reading
    /// of the rules builds the head it expects the same way).
    public init() {
        method = .get
        keepAlive = true
    }
}

/// Where a field's value lies in the head, in 8 bytes: a head is at most tens of kilobytes, far inside
/// 32-bit offsets. `absent` (a lower bound past any head) stands for no such field.
struct HeadSpan: Sendable, Equatable {
    private var lower: UInt32
    private var upper: UInt32

    static let absent = HeadSpan(lower: .max, upper: .max)

    private init(lower: UInt32, upper: UInt32) {
        self.lower = lower
        self.upper = upper
    }

    init(_ range: Range<Int>?) {
        guard let range else {
            self = .absent
            return
        }
        // A head's offsets always fit; clamped all the same, so a bad caller cannot trap the server.
        lower = UInt32(clamping: range.lowerBound)
        upper = UInt32(clamping: range.upperBound)
        if lower == .max { self = .absent }
    }

    var range: Range<Int>? {
        lower == .max ? nil : Int(lower)..<Int(upper)
    }
}
