/// A request head as `RequestHeadParser` found it: what the connection and the route need, as byte
/// offsets into the buffer given to `parse` (no copies, no strings). A header the parser does not name
/// here is checked and skipped.
public struct RequestHead: Sendable, Equatable {
    /// The method, one of the known ones.
    public var method: HTTPMethod
    /// The origin-form target (`/path?query`), as sent: nothing decoded.
    public var target: Range<Int>
    /// 1 for HTTP/1.1, 0 for HTTP/1.0 (the only versions accepted).
    public var minorVersion: Int
    /// Whether the connection may carry another request after this one: for HTTP/1.1 unless a Connection
    /// header holds the token `close`, for HTTP/1.0 only if one holds `keep-alive` (and none `close`).
    public var keepAlive: Bool
    /// The Content-Length, 0 if absent. The parser refuses none: whether the route takes a body is the
    /// route's business.
    public var contentLength: Int
    /// The head's length in bytes, its final CRLF CRLF included: where a body, or the next pipelined
    /// request, starts.
    public var headLength: Int
    // Field values, with leading and trailing spaces and tabs trimmed; nil when the header is absent.
    /// Host (at most one: a second is refused).
    public var host: Range<Int>?
    /// User-Agent (at most one).
    public var userAgent: Range<Int>?
    /// Purpose (at most one): `prefetch` from browsers that prefetch a link.
    public var purpose: Range<Int>?
    /// Sec-Purpose (at most one): `prefetch` or `prefetch;prerender`.
    public var secPurpose: Range<Int>?
    /// Accept-Language: a list, so a repeated header is allowed and the last one is kept.
    public var acceptLanguage: Range<Int>?
    /// Authorization (at most one).
    public var authorization: Range<Int>?
    /// Content-Type (at most one).
    public var contentType: Range<Int>?
    /// Stripe-Signature and Paddle-Signature: a payment provider's webhook signature (the last one if
    /// repeated; only the signature check reads them, over the body).
    public var stripeSignature: Range<Int>?
    public var paddleSignature: Range<Int>?
    /// `Expect: 100-continue`: the client waits for a `100 Continue` before it sends the body.
    public var expectsContinue = false
    /// The first of the parser's configured extra headers (`RequestHeadParser.init`'s
    /// `extraHeaders[0]`); if repeated, the last one.
    public var extra0: Range<Int>?
    /// The second configured extra header (`extraHeaders[1]`); if repeated, the last one.
    public var extra1: Range<Int>?

    /// An empty head, filled in by the parser as it reads (public for fuzz-head, whose naive second reading
    /// of the rules builds the head it expects the same way).
    public init() {
        method = .get
        target = 0..<0
        minorVersion = 1
        keepAlive = true
        contentLength = 0
        headLength = 0
    }
}
