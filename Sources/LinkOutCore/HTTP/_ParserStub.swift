// TEMPORARY: the parser's API, stubbed until the strict parser lands. Deleted at that merge.
public enum HTTPMethod: UInt8, Sendable {
    case get, head, post, put, delete, options, trace, connect, patch
    public var name: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .post: "POST"
        case .put: "PUT"
        case .delete: "DELETE"
        case .options: "OPTIONS"
        case .trace: "TRACE"
        case .connect: "CONNECT"
        case .patch: "PATCH"
        }
    }
}

public struct RequestHead: Sendable {
    public var method: HTTPMethod = .get
    public var target: Range<Int> = 0..<0
    public var minorVersion = 1
    public var keepAlive = true
    public var contentLength = 0
    public var headLength = 0
    public var host: Range<Int>?
    public var userAgent: Range<Int>?
    public var purpose: Range<Int>?
    public var secPurpose: Range<Int>?
    public var acceptLanguage: Range<Int>?
    public var authorization: Range<Int>?
    public var contentType: Range<Int>?
    public var extra0: Range<Int>?
    public var extra1: Range<Int>?
}

extension HeadProblem {
    public var status: Int { 400 }
}

public struct RequestHeadParser: Sendable {
    public enum Outcome: Sendable { case incomplete, head(RequestHead), refused(HeadProblem) }
    public static let defaultMaxHeadBytes = 16_384, defaultMaxTargetBytes = 8_192, defaultMaxHeaderLines = 100
    private let extras: [[UInt8]]
    private let maxHeadBytes: Int

    public init(extraHeaders: [String] = [], maxHeadBytes: Int = defaultMaxHeadBytes, maxTargetBytes: Int = defaultMaxTargetBytes, maxHeaderLines: Int = defaultMaxHeaderLines) {
        extras = extraHeaders.map { Array($0.lowercased().utf8) }
        self.maxHeadBytes = maxHeadBytes
    }

    public mutating func reset() {}

    public mutating func parse(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        var end = -1
        if bytes.count >= 4 {
            for index in 3..<bytes.count where bytes[index] == 0x0A && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A && bytes[index - 3] == 0x0D {
                end = index + 1
                break
            }
        }
        if end < 0 { return bytes.count > maxHeadBytes ? .refused(.absoluteFormTarget) : .incomplete }
        var head = RequestHead()
        head.headLength = end
        var lineStart = 0
        var first = true
        var index = 0
        while index < end - 2 {
            if bytes[index] == 0x0D {
                let line = lineStart..<index
                if first {
                    let spaces = line.filter { bytes[$0] == 0x20 }
                    guard spaces.count == 2 else { return .refused(.absoluteFormTarget) }
                    let method = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[line.lowerBound..<spaces[0]]), as: UTF8.self)
                    switch method {
                    case "GET": head.method = .get
                    case "HEAD": head.method = .head
                    case "POST": head.method = .post
                    case "PUT": head.method = .put
                    case "DELETE": head.method = .delete
                    default: head.method = .options
                    }
                    head.target = (spaces[0] + 1)..<spaces[1]
                    guard head.target.count > 0, bytes[head.target.lowerBound] == 0x2F else { return .refused(.absoluteFormTarget) }
                    head.minorVersion = bytes[line.upperBound - 1] == 0x30 ? 0 : 1
                    head.keepAlive = head.minorVersion == 1
                    first = false
                } else if let colon = line.first(where: { bytes[$0] == 0x3A }) {
                    let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[line.lowerBound..<colon]), as: UTF8.self).lowercased()
                    var valueStart = colon + 1
                    while valueStart < line.upperBound && bytes[valueStart] == 0x20 { valueStart += 1 }
                    let value = valueStart..<line.upperBound
                    switch name {
                    case "host": head.host = value
                    case "user-agent": head.userAgent = value
                    case "purpose": head.purpose = value
                    case "sec-purpose": head.secPurpose = value
                    case "accept-language": head.acceptLanguage = value
                    case "authorization": head.authorization = value
                    case "content-type": head.contentType = value
                    case "content-length": head.contentLength = Int(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[value]), as: UTF8.self)) ?? 0
                    case "connection":
                        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[value]), as: UTF8.self).lowercased()
                        if text.contains("close") { head.keepAlive = false }
                        if text.contains("keep-alive") { head.keepAlive = true }
                    default:
                        if extras.count > 0 && Array(name.utf8) == extras[0] { head.extra0 = value }
                        if extras.count > 1 && Array(name.utf8) == extras[1] { head.extra1 = value }
                    }
                }
                lineStart = index + 2
                index += 2
                continue
            }
            index += 1
        }
        return .head(head)
    }
}
