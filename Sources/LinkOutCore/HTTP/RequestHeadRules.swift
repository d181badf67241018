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
