import Foundation
import LinkOutCore
import Testing

/// Replies as bytes: a well-formed status line for every status, the connection layer's own fields, no
/// body for HEAD, 204 or 304.
@Suite struct ReplyEncoderTests {
    static let date = Array("Tue, 24 Nov 2026 19:27:48 GMT".utf8)

    static func encode(_ reply: Reply, head: Bool = false, keepAlive: Bool = true, http10: Bool = false) -> String {
        var output: [UInt8] = []
        ReplyEncoder.encode(reply, into: &output, date: date, headRequest: head, keepAlive: keepAlive, http10: http10)
        return String(decoding: output, as: UTF8.self)
    }

    @Test func aRedirect() {
        let reply = ShopperReplies.redirect(location: "https://a.example/x?id=1", reason: nil, access: ReplyAccess(route: "nl"))
        #expect(
            Self.encode(reply) == "HTTP/1.1 302 Found\r\nLocation: https://a.example/x?id=1\r\nCache-Control: no-store\r\n"
                + "Referrer-Policy: no-referrer\r\nDate: Tue, 24 Nov 2026 19:27:48 GMT\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func headKeepsTheLengthAndDropsTheBody() {
        let reply = ShopperReplies.text(200, "ok\n", access: ReplyAccess(route: "healthz"))
        let get = Self.encode(reply)
        let head = Self.encode(reply, head: true)
        #expect(get.hasSuffix("Content-Length: 3\r\n\r\nok\n"))
        #expect(head.hasSuffix("Content-Length: 3\r\n\r\n"))
    }

    @Test func connectionFields() {
        let reply = ShopperReplies.text(200, "ok\n", access: ReplyAccess(route: "healthz"))
        #expect(Self.encode(reply, keepAlive: false).contains("\r\nConnection: close\r\n\r\n"))
        #expect(Self.encode(reply, http10: true).contains("\r\nConnection: keep-alive\r\n\r\n"))
        #expect(!Self.encode(reply).contains("Connection:"))
    }

    @Test func noContentHasNoLengthAndNoBody() {
        let text = Self.encode(ShopperReplies.favicon)
        #expect(text.hasPrefix("HTTP/1.1 204 No Content\r\n"))
        #expect(!text.contains("Content-Length"))
        #expect(text.hasSuffix("\r\n\r\n"))
    }

    @Test func everyStatusLineIsWellFormed() {
        for status in [200, 204, 302, 400, 401, 404, 405, 413, 414, 415, 422, 429, 431, 501, 503, 505, 299, 999] {
            let line =
                Self.encode(Reply(status: status, access: ReplyAccess(route: "x"))).split(separator: "\r\n").first.map(String.init) ?? ""
            #expect(line.wholeMatch(of: /HTTP\/1\.1 [1-5][0-9][0-9] [A-Za-z][A-Za-z -]*/) != nil, "\(line)")
        }
    }

    @Test func lengthsOfEveryMagnitude() {
        for count in [0, 7, 10, 99, 100, 12_345, 1_000_000] {
            let reply = Reply(status: 200, body: [UInt8](repeating: 0x61, count: count), access: ReplyAccess(route: "x"))
            #expect(Self.encode(reply, head: true).contains("Content-Length: \(count)\r\n"))
        }
    }

    @Test func httpDatesMatchFoundation() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var generator = SystemRandomNumberGenerator()
        for seconds in [Int64(0), 784_111_777, 951_782_400, 4_102_444_799]
            + (0..<500).map({ _ in Int64.random(in: 0...4_102_444_799, using: &generator) })
        {
            let ours = String(decoding: HTTPDate.format(secondsSinceEpoch: seconds), as: UTF8.self)
            #expect(ours == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))), "\(seconds)")
        }
    }
}
