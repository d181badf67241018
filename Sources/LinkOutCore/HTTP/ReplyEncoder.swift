/// Writes a `Reply` as HTTP/1.1 bytes: one status line from a fixed table, the reply's fields, then the
/// fields the connection layer owns. Appends to a buffer the caller keeps (one per loop), so an answer is
/// one `write` and, once the buffer has grown, no allocation.
public enum ReplyEncoder {
    /// - Parameters:
    ///   - date: the `Date` field's value (IMF-fixdate, 29 bytes), made once a second by the caller.
    ///   - headRequest: a HEAD: the fields as for GET, no body.
    ///   - keepAlive: the connection stays open after this answer.
    ///   - http10: the request was HTTP/1.0, whose connections close unless `keep-alive` is said.
    public static func encode(_ reply: Reply, into output: inout [UInt8], date: [UInt8], headRequest: Bool, keepAlive: Bool, http10: Bool) {
        appendStatusLine(reply.status, to: &output)
        for header in reply.headers {
            appendUTF8(header.name, to: &output)
            output.append(0x3A)
            output.append(0x20)
            appendUTF8(header.value, to: &output)
            output.append(0x0D)
            output.append(0x0A)
        }
        output.append(contentsOf: dateName)
        output.append(contentsOf: date)
        output.append(0x0D)
        output.append(0x0A)
        // 204 and 304 carry no Content-Length (RFC 9110 §8.6); everything else says how long it is, HEAD too.
        if reply.status != 204 && reply.status != 304 {
            output.append(contentsOf: contentLengthName)
            JSONText.appendDecimal(Int64(reply.body.count), to: &output)
            output.append(0x0D)
            output.append(0x0A)
        }
        if !keepAlive {
            output.append(contentsOf: connectionClose)
        } else if http10 {
            output.append(contentsOf: connectionKeepAlive)
        }
        output.append(0x0D)
        output.append(0x0A)
        if !headRequest && reply.status != 204 && reply.status != 304 {
            output.append(contentsOf: reply.body)
        }
    }

    private static let dateName = Array("Date: ".utf8)
    private static let contentLengthName = Array("Content-Length: ".utf8)
    private static let connectionClose = Array("Connection: close\r\n".utf8)
    private static let connectionKeepAlive = Array("Connection: keep-alive\r\n".utf8)

    /// `HTTP/1.1 NNN Reason\r\n`, prepared once per status linkout sends, at `status - 100`: an index, where
    /// a dictionary hashed the status for every answer.
    private static let statusLines: [[UInt8]] = (100...599).map { status in
        // Not in the table: a well-formed line all the same (the phrase is optional in HTTP/1.1).
        Array("HTTP/1.1 \(status) \(phrases[status] ?? "Status")\r\n".utf8)
    }

    /// The reason phrases of RFC 9110 §15 for every status linkout answers with.
    public static let phrases: [Int: String] = [
        200: "OK", 204: "No Content", 302: "Found", 304: "Not Modified",
        400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
        408: "Request Timeout", 409: "Conflict", 413: "Content Too Large", 414: "URI Too Long",
        415: "Unsupported Media Type", 422: "Unprocessable Content", 429: "Too Many Requests",
        431: "Request Header Fields Too Large", 500: "Internal Server Error", 501: "Not Implemented",
        503: "Service Unavailable", 505: "HTTP Version Not Supported",
    ]

    @inline(__always)
    private static func appendStatusLine(_ status: Int, to output: inout [UInt8]) {
        statusLines.withUnsafeBufferPointer { lines in
            lines[min(max(status, 100), 599) - 100].withUnsafeBufferPointer { output.append(contentsOf: $0) }
        }
    }

    /// A string's bytes by one copy from its storage, where appending its `utf8` view went byte by byte
    /// through the generic path.
    @inline(__always)
    private static func appendUTF8(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { output.append(contentsOf: $0) }
    }
}
