// libFuzzer target for RequestHeadParser, built like every other target (fuzz/Package.swift, against
// LinkOutCore as a package product). A crash is a fatalError below naming the broken rule, a precondition
// failure in the parser, or anything AddressSanitizer reports.
//
// For each input, with two configurations (the defaults with two extra headers; small limits taken from
// the input so they are reached by short inputs):
// - one call, and a second call on the same bytes, give the same outcome;
// - split at a point taken from the input (two calls), and byte by byte for inputs up to 512 bytes, give
//   the same outcome as one call, ranges included;
// - the parser accepts exactly the heads an independent, naive reading of the rules accepts (lines split at
//   CRLF, then checked one by one, with arrays and dictionaries), with the same facts and ranges; a head
//   that ended within the limit is never `.incomplete`.
import FuzzDriver
import LinkOutCore

private let tokenBytes = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)

private func check(_ condition: Bool, _ rule: @autoclosure () -> String, _ input: UnsafeRawBufferPointer) {
    if !condition {
        // fatalError, not preconditionFailure: -O drops a precondition's message.
        fatalError("\(rule()) — input \(Array(input).prefix(200))")
    }
}

private func parsed(_ configured: RequestHeadParser, _ bytes: UnsafeRawBufferPointer) -> RequestHeadParser.Outcome {
    var parser = configured
    let outcome = parser.parse(bytes)
    check(parser.parse(bytes) == outcome, "a second call answers differently", bytes)
    return outcome
}

private func parsedSplit(_ configured: RequestHeadParser, _ bytes: UnsafeRawBufferPointer, at split: Int) -> RequestHeadParser.Outcome {
    var parser = configured
    let first = parser.parse(UnsafeRawBufferPointer(rebasing: bytes[0..<split]))
    return first == .incomplete ? parser.parse(bytes) : first
}

private func parsedByteByByte(_ configured: RequestHeadParser, _ bytes: UnsafeRawBufferPointer) -> RequestHeadParser.Outcome {
    var parser = configured
    for received in 0...bytes.count {
        let outcome = parser.parse(UnsafeRawBufferPointer(rebasing: bytes[0..<received]))
        if outcome != .incomplete { return outcome }
    }
    return .incomplete
}

private func lowercased<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [UInt8] {
    bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }
}

/// Without leading and trailing SP and HTAB.
private func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var bytes = bytes
    while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
    while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
    return bytes
}

/// What the naive reading found.
private enum Naive {
    /// No CRLF CRLF within the head limit: the parser may not accept.
    case noEnd
    /// The head up to the first CRLF CRLF breaks a rule: the parser must refuse.
    case invalid(String)
    /// The parser must accept, with these facts.
    case valid(RequestHead)
}

/// The rules read again the slow way, from the first CRLF CRLF back: lines split at CRLF, then checked
/// one by one, with arrays and dictionaries. An independent oracle for the parser's accept-or-not.
private func naive(_ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int, maxTargetBytes: Int, maxHeaderLines: Int, extras: [String]) -> Naive {
    let all = Array(bytes.prefix(maxHeadBytes))
    var end = -1
    if all.count >= 4 {
        for index in 0...(all.count - 4) where all[index] == 0x0D && all[index + 1] == 0x0A && all[index + 2] == 0x0D && all[index + 3] == 0x0A {
            end = index
            break
        }
    }
    guard end >= 0 else { return .noEnd }
    let length = end + 4
    let headBytes = Array(all[0..<length])
    if headBytes.contains(0) { return .invalid("NUL") }
    // Split at CRLF; no other CR or LF may be left.
    var lines: [ArraySlice<UInt8>] = []
    var lineStart = 0
    var index = 0
    while index < length - 2 {
        if headBytes[index] == 0x0D {
            if headBytes[index + 1] != 0x0A { return .invalid("bare CR") }
            lines.append(headBytes[lineStart..<index])
            index += 2
            lineStart = index
        } else if headBytes[index] == 0x0A {
            return .invalid("bare LF")
        } else {
            index += 1
        }
    }
    var head = RequestHead()
    head.headLength = length

    // The request line: exactly three parts.
    let parts = lines[0].split(separator: 0x20, omittingEmptySubsequences: false)
    guard parts.count == 3 else { return .invalid("request line in \(parts.count) parts") }
    guard let method = HTTPMethod.allCases.first(where: { Array($0.name.utf8) == Array(parts[0]) }) else { return .invalid("method") }
    head.method = method
    let target = parts[1]
    guard target.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else { return .invalid("target") }
    guard target.count <= maxTargetBytes else { return .invalid("target too long") }
    if target.first == UInt8(ascii: "/") {
        head.target = target.startIndex..<target.endIndex
    } else {
        // Absolute-form: http:// or https:// in any case, a host (not empty, no user info), then the path.
        let text = String(decoding: target, as: UTF8.self)
        let lower = text.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else { return .invalid("target form") }
        let rest = target.dropFirst(scheme.utf8.count)
        let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
        guard let first = authority.first, first != UInt8(ascii: ":"),
              authority.allSatisfy({ RequestHeadParser.isHostByte($0) }) else { return .invalid("authority") }
        head.target = authority.endIndex..<target.endIndex
    }
    switch Array(parts[2]) {
    case Array("HTTP/1.1".utf8): head.minorVersion = 1
    case Array("HTTP/1.0".utf8): head.minorVersion = 0
    default: return .invalid("version")
    }

    // The header lines.
    guard lines.count - 1 <= maxHeaderLines else { return .invalid("too many header lines") }
    var counts: [[UInt8]: Int] = [:]
    var values: [[UInt8]: Range<Int>] = [:]
    var connectionTokens: [[UInt8]] = []
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return .invalid("no colon") }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(tokenBytes.contains) else { return .invalid("name") }
        let rawValue = line[(colon + 1)...]
        guard rawValue.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else { return .invalid("control byte in a value") }
        let value = trimmed(rawValue)
        let key = lowercased(name)
        counts[key, default: 0] += 1
        values[key] = value.startIndex..<value.endIndex
        if key == Array("connection".utf8) {
            connectionTokens += value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { lowercased(trimmed($0)) }
        }
    }
    func named(_ name: String) -> [UInt8] { lowercased(name.utf8) }
    if counts[named("transfer-encoding")] != nil { return .invalid("Transfer-Encoding") }
    for single in ["host", "content-length", "authorization", "content-type", "user-agent", "purpose", "sec-purpose"] where (counts[named(single)] ?? 0) > 1 {
        return .invalid("\(single) twice")
    }
    head.host = values[named("host")]
    if head.minorVersion == 1 && head.host == nil { return .invalid("no Host") }
    if let host = head.host, !headBytes[host].allSatisfy({ RequestHeadParser.isHostByte($0) }) { return .invalid("Host") }
    if let range = values[named("content-length")] {
        let digits = headBytes[range]
        guard !digits.isEmpty, digits.count <= 18, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return .invalid("Content-Length") }
        head.contentLength = Int(String(decoding: digits, as: UTF8.self))!
    }
    head.userAgent = values[named("user-agent")]
    head.purpose = values[named("purpose")]
    head.secPurpose = values[named("sec-purpose")]
    head.acceptLanguage = values[named("accept-language")]
    head.authorization = values[named("authorization")]
    head.contentType = values[named("content-type")]
    head.extra0 = extras.count > 0 ? values[named(extras[0])] : nil
    head.extra1 = extras.count > 1 ? values[named(extras[1])] : nil
    let close = connectionTokens.contains(named("close"))
    let keepAlive = connectionTokens.contains(named("keep-alive"))
    head.keepAlive = !close && (head.minorVersion == 1 || keepAlive)
    return .valid(head)
}

private func run(_ configured: RequestHeadParser, _ bytes: UnsafeRawBufferPointer, maxHeadBytes: Int, maxTargetBytes: Int, maxHeaderLines: Int, extras: [String], seed: Int) {
    let whole = parsed(configured, bytes)
    let split = bytes.count == 0 ? 0 : seed % (bytes.count + 1)
    let splitOutcome = parsedSplit(configured, bytes, at: split)
    check(splitOutcome == whole, "split at \(split): \(splitOutcome), whole: \(whole)", bytes)
    if bytes.count <= 512 {
        let byteByByte = parsedByteByByte(configured, bytes)
        check(byteByByte == whole, "byte by byte: \(byteByByte), whole: \(whole)", bytes)
    }
    // The parser accepts exactly what the naive reading accepts, with the same facts.
    switch (whole, naive(bytes, maxHeadBytes: maxHeadBytes, maxTargetBytes: maxTargetBytes, maxHeaderLines: maxHeaderLines, extras: extras)) {
    case (.head(let head), .valid(let expected)):
        check(head.headLength <= bytes.count && head.headLength <= maxHeadBytes, "head length past the buffer or the limit", bytes)
        let ranges = [head.target, head.host, head.userAgent, head.purpose, head.secPurpose, head.acceptLanguage, head.authorization, head.contentType, head.extra0, head.extra1]
        check(ranges.allSatisfy { $0.map { $0.lowerBound >= 0 && $0.upperBound <= head.headLength } ?? true }, "a range outside the head", bytes)
        check(head == expected, "head \(head), the naive reading \(expected)", bytes)
    case (.head(let head), .invalid(let rule)):
        check(false, "accepted \(head), though the naive reading says: \(rule)", bytes)
    case (.head(let head), .noEnd):
        check(false, "accepted \(head) without CRLF CRLF within the limit", bytes)
    case (_, .valid(let expected)):
        check(false, "\(whole), though the naive reading accepts \(expected)", bytes)
    case (.incomplete, .invalid(let rule)):
        check(false, "incomplete, though the head has ended (and \(rule))", bytes)
    case (.incomplete, .noEnd):
        check(bytes.count <= maxHeadBytes, "incomplete past the head limit", bytes)
    case (.refused, _):
        break
    }
}

private let defaultExtras = ["X-Forwarded-For", "cf-ipcountry"]
private let defaultParser = RequestHeadParser(extraHeaders: defaultExtras)

@_cdecl("LLVMFuzzerTestOneInput")
public func requestHeadParserFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    // A seed from the input's bytes, for the split point and the small limits.
    var seed = size
    for byte in bytes { seed = (seed &* 31) &+ Int(byte) }
    seed = seed & Int.max
    run(
        defaultParser, bytes, maxHeadBytes: RequestHeadParser.defaultMaxHeadBytes, maxTargetBytes: RequestHeadParser.defaultMaxTargetBytes,
        maxHeaderLines: RequestHeadParser.defaultMaxHeaderLines, extras: defaultExtras, seed: seed)
    let maxHeadBytes = 18 + seed % 200
    let maxTargetBytes = 1 + (seed >> 8) % 40
    let maxHeaderLines = (seed >> 16) % 6
    let small = RequestHeadParser(extraHeaders: ["x-a"], maxHeadBytes: maxHeadBytes, maxTargetBytes: maxTargetBytes, maxHeaderLines: maxHeaderLines)
    run(small, bytes, maxHeadBytes: maxHeadBytes, maxTargetBytes: maxTargetBytes, maxHeaderLines: maxHeaderLines, extras: ["x-a"], seed: seed >> 24)
    return 0
}

@_cdecl("fuzz_head_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, requestHeadParserFuzz)
}
