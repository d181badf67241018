/// What the gateway refuses in a request head: the forms request smuggling and header injection are built
/// from, and heads that are not HTTP/1.1 as RFC 9112 writes it. Each has its own code, sent in
/// `X-Linkout-Reason` with the answer's `status` (400 unless the case says otherwise).
public enum HeadProblem: String, Sendable, CaseIterable {
    /// The target is neither origin-form (`/path?query`) nor an `http(s)://host…` absolute-form: `GET nl`,
    /// `GET *`, CONNECT's `host:port`, another scheme, user info or no host in an absolute-form, and an
    /// empty target (two spaces after the method).
    case unsupportedTargetForm = "unsupported_target_form"
    /// A target byte outside printable ASCII (a raw space, a control byte, a non-ASCII byte).
    case invalidTarget = "invalid_target"
    /// A control byte (other than tab) or DEL in a header's name or value, or a space in a name (which a
    /// proxy in front may strip, making the header one it did not see).
    case controlCharacterInHeader = "control_character_in_header"
    /// Any Transfer-Encoding: link-out requests have no body, and TE is what smuggling rides on.
    case transferEncoding = "transfer_encoding"
    /// Host given twice: which one a proxy in front used is anyone's guess.
    case duplicateHost = "duplicate_host"
    /// Content-Length given twice, even with the same value: one framing, stated once.
    case duplicateContentLength = "duplicate_content_length"
    /// A Content-Length other than 0 on a route that takes no body: unread, the body would be parsed as
    /// the next request, and a proxy in front that honours the length sends one request where linkout
    /// would answer two. (`RequestHeadParser` never raises it: the route decides what a body may be.)
    case bodyNotAllowed = "body_not_allowed"
    /// An HTTP/1.1 request without Host (RFC 9112 §3.2: a server must answer it 400).
    case missingHost = "missing_host"
    // Bytes a lenient parser (libevent's) hides once it has parsed a head.
    /// A NUL byte in the head: libevent cuts the line there, so the rest of it would go unseen.
    case nulInHeader = "nul_in_header"
    /// A header line starting with a space or tab (obs-fold), which libevent merges into the previous
    /// header; a proxy in front may read it as a header of its own.
    case obsFold = "obs_fold"
    /// A line ended by a bare LF instead of CRLF, which libevent accepts and others may not.
    case bareLF = "bare_lf"
    // From `RequestHeadParser`, which reads the whole head itself.
    /// A malformed request line: a part missing (HTTP/0.9's `GET /x`), a space too many, a method with a
    /// byte that is not a token's, a version that is not `HTTP/` DIGIT `.` DIGIT (`HTTP/1.x`), or empty
    /// lines before it (RFC 9112 §2.2 allows ignoring them; refusing is the simpler strictness).
    case badRequestLine = "bad_request_line"
    /// A well-formed method token that is not one linkout knows (`HTTPMethod`), compared case-sensitively
    /// as RFC 9110 §9.1 says, so `get` is one too. Answered 501.
    case unknownMethod = "unknown_method"
    /// A well-formed `HTTP/x.y` other than 1.0 and 1.1 (`HTTP/2.0`, `HTTP/1.2`). Answered 505.
    case unsupportedVersion = "unsupported_version"
    /// A target longer than the parser's limit. Answered 414.
    case targetTooLong = "target_too_long"
    /// The head grew past the parser's byte limit before it ended, or has too many header lines.
    /// Answered 431.
    case headTooLarge = "head_too_large"
    /// A header line with an empty name, without a colon, or with a name byte that is neither a token's
    /// nor a control or space (those are `controlCharacterInHeader`): `(X): a`, `Garbage`.
    case invalidHeaderName = "invalid_header_name"
    /// A Content-Length that is not 1*DIGIT (no sign, no list, no spaces inside) or has more than 18
    /// digits.
    case invalidContentLength = "invalid_content_length"
    /// A second Authorization, Content-Type, User-Agent, Purpose or Sec-Purpose: fields that hold one
    /// value, where which one a proxy in front used is anyone's guess. (Host and Content-Length have
    /// their own codes.)
    case duplicateHeader = "duplicate_header"
    /// A CR not followed by LF: some parsers take it as a line end, others as data.
    case bareCR = "bare_cr"
    /// A Host value with a byte no `host[:port]` has (a `/`, an `@`, whitespace inside, a quote): the
    /// forms host-header injection uses. An empty Host is allowed (RFC 9112 §3.2).
    case badHost = "bad_host"

    /// The answer's status code.
    public var status: Int {
        switch self {
        case .unknownMethod: 501
        case .unsupportedVersion: 505
        case .targetTooLong: 414
        case .headTooLarge: 431
        default: 400
        }
    }
}
