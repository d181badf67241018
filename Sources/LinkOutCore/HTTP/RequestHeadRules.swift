/// What the gateway refuses in a request head before it looks at the link, beyond what libevent's parser
/// already refuses: the forms request smuggling and header injection are built from. Each has its own
/// code, sent in `X-Linkout-Reason` with a 400.
public enum HeadProblem: String, Sendable, CaseIterable {
    /// The target is not origin-form (`/path?query`): `GET http://host/nl`, `GET nl`, `GET *`.
    case absoluteFormTarget = "absolute_form_target"
    /// A target byte outside printable ASCII (a raw space, a control byte, a non-ASCII byte).
    case invalidTarget = "invalid_target"
    /// A control byte (other than tab) or DEL in a header's name or value.
    case controlCharacterInHeader = "control_character_in_header"
    /// Any Transfer-Encoding: link-out requests have no body, and TE is what smuggling rides on.
    case transferEncoding = "transfer_encoding"
    /// Host given twice: which one a proxy in front used is anyone's guess.
    case duplicateHost = "duplicate_host"
    /// Content-Length given twice.
    case duplicateContentLength = "duplicate_content_length"
    /// A Content-Length other than 0. evhttp refuses a GET's body itself (413), but reads none for HEAD
    /// (libevent 2.1's `evhttp_method_may_have_body` says HEAD has none) and would parse the body as the
    /// next request: a proxy in front that honours the length sends one request, linkout would answer two.
    case bodyNotAllowed = "body_not_allowed"
    /// An HTTP/1.1 request without Host (RFC 9112 §3.2: a server must answer it 400).
    case missingHost = "missing_host"
    // Seen only in the raw bytes (`RequestHeadScanner`): libevent's parser hides them.
    /// A NUL byte in the head: libevent cuts the line there, so the rest of it would go unseen.
    case nulInHeader = "nul_in_header"
    /// A header line starting with a space or tab (obs-fold), which libevent merges into the previous
    /// header; a proxy in front may read it as a header of its own.
    case obsFold = "obs_fold"
    /// A line ended by a bare LF instead of CRLF, which libevent accepts and others may not.
    case bareLF = "bare_lf"
}

/// Checks a request head as evhttp hands it over: the target, then the headers one by one, then
/// `checkEnd` with the request's version.
public struct RequestHeadRules: Sendable {
    private var hostSeen = false
    private var contentLengthSeen = false
    private var chunkedSeen = false
    /// For the one request that has a body (Apple's notification, a POST on `notifications.path`): a
    /// Content-Length, or `Transfer-Encoding: chunked` alone; never both (the smuggling form).
    private let bodyAllowed: Bool

    public init(bodyAllowed: Bool = false) {
        self.bodyAllowed = bodyAllowed
    }

    /// The target as sent.
    public static func check(target: UnsafeRawBufferPointer) -> HeadProblem? {
        guard let first = target.first, first == UInt8(ascii: "/") else { return .absoluteFormTarget }
        for byte in target where byte < 0x21 || byte > 0x7E {
            return .invalidTarget
        }
        return nil
    }

    /// One header, in the order received.
    public mutating func check(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> HeadProblem? {
        for byte in name where byte < 0x21 || byte > 0x7E { return .controlCharacterInHeader }
        for byte in value where (byte < 0x20 && byte != 0x09) || byte == 0x7F { return .controlCharacterInHeader }
        if Self.equalsIgnoringCase(name, "transfer-encoding") {
            guard bodyAllowed, !contentLengthSeen, !chunkedSeen, Self.equalsIgnoringCase(value, "chunked") else { return .transferEncoding }
            chunkedSeen = true
            return nil
        }
        if Self.equalsIgnoringCase(name, "host") {
            if hostSeen { return .duplicateHost }
            hostSeen = true
        } else if Self.equalsIgnoringCase(name, "content-length") {
            if contentLengthSeen { return .duplicateContentLength }
            if chunkedSeen { return .transferEncoding }
            contentLengthSeen = true
            if !bodyAllowed, value.count != 1 || value[0] != UInt8(ascii: "0") { return .bodyNotAllowed }
        }
        return nil
    }

    /// After the last header: what depends on the head as a whole. `major` and `minor` are the HTTP
    /// version libevent parsed (it refuses a major version above 1).
    public func checkEnd(major: Int, minor: Int) -> HeadProblem? {
        if !hostSeen && (major > 1 || (major == 1 && minor >= 1)) { return .missingHost }
        return nil
    }

    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for index in 0..<bytes.count {
            var byte = bytes[index]
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte += 32 }
            if byte != expected[index] { return false }
        }
        return true
    }
}
