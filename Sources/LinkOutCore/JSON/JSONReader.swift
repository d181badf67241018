/// A small JSON reader over UTF-8 bytes, shared by the token decoder (which streams a flat object and
/// keeps only the fields it knows) and the config loader (which builds a `JSONValue` tree).
///
/// Written by hand rather than using Foundation's decoders: a token is decoded on every request and
/// `JSONDecoder` costs ~5.6 µs for a small struct (bench/README.md, Method and anchors), and neither Foundation
/// decoder tells a boolean from a number or reports duplicate keys reliably on Linux.
///
/// It reads borrowed bytes (the caller keeps them alive while it reads) rather than an array: an array's
/// every subscript is bounds-checked, which cost the token's JSON some 2,000 instructions a request, and
/// the token's bytes are never in an array of their own anyway.
struct JSONReader {
    struct Failure: Error, Equatable {
        var message: String
        var offset: Int
    }

    private let bytes: UnsafeRawBufferPointer
    /// `bytes.count`, kept: an `UnsafeRawBufferPointer` works its count out from an optional start on
    /// every use, and the reader asks for it before every byte.
    private let count: Int
    private(set) var index: Int = 0
    /// Nesting limit: bounds recursion on hostile input.
    let maxDepth: Int

    /// `//` line comments count as whitespace: for config files, which people annotate. Never for tokens.
    let allowsComments: Bool

    init(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = 32, allowsComments: Bool = false) {
        self.bytes = bytes
        self.count = bytes.count
        self.maxDepth = maxDepth
        self.allowsComments = allowsComments
    }

    // MARK: Structure

    /// Inlined where it is called, as it is called around every token: between a token's members there is
    /// no whitespace, and the first test answers that.
    @inline(__always)
    mutating func skipWhitespace() {
        if index < count, bytes[index] > 0x20, bytes[index] != UInt8(ascii: "/") { return }
        skipWhitespaceAndComments()
    }

    private mutating func skipWhitespaceAndComments() {
        while index < count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            case UInt8(ascii: "/") where allowsComments && index + 1 < count && bytes[index + 1] == UInt8(ascii: "/"):
                while index < count, bytes[index] != 0x0A { index += 1 }
            default: return
            }
        }
    }

    var atEnd: Bool { index >= count }

    @inline(__always)
    mutating func expect(_ byte: UInt8, _ what: StaticString) throws(Failure) {
        skipWhitespace()
        guard index < count, bytes[index] == byte else { throw fail("expected \(what)") }
        index += 1
    }

    /// Consumes `byte` if it is next (after whitespace).
    @inline(__always)
    mutating func consume(_ byte: UInt8) -> Bool {
        skipWhitespace()
        if index < count, bytes[index] == byte {
            index += 1
            return true
        }
        return false
    }

    @inline(__always)
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return index < count ? bytes[index] : nil
    }

    func fail(_ message: String) -> Failure {
        Failure(message: message, offset: index)
    }

    /// Calls `body` once per member of an object, positioned on the member's value.
    mutating func readObject(depth: Int = 0, _ body: (inout JSONReader, JSONKey) throws(Failure) -> Void) throws(Failure) {
        guard depth < maxDepth else { throw fail("nested too deeply") }
        try expect(UInt8(ascii: "{"), "'{'")
        if consume(UInt8(ascii: "}")) { return }
        repeat {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let key = try readKey()
            try expect(UInt8(ascii: ":"), "':'")
            try body(&self, key)
        } while consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"), "',' or '}'")
    }

    /// A key as plain ASCII bytes in place (every key a token or config has), or decoded when it holds
    /// escapes or other characters. Matching a known name then needs no allocation.
    private mutating func readKey() throws(Failure) -> JSONKey {
        let start = index + 1
        let end = plainRunEnd(from: start, stoppingAtNonASCII: true)
        if end < count, bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            return JSONKey(ascii: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
        }
        return JSONKey(decoded: try readString())
    }

    // MARK: Values

    /// Reads any value and builds it.
    mutating func readValue(depth: Int = 0) throws(Failure) -> JSONValue {
        guard depth < maxDepth else { throw fail("nested too deeply") }
        guard let byte = peek() else { throw fail("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"):
            var members: [(key: String, value: JSONValue, offset: Int)] = []
            try readObject(depth: depth) { (reader: inout JSONReader, key: JSONKey) throws(Failure) in
                let offset = reader.index
                members.append((key.string, try reader.readValue(depth: depth + 1), offset))
            }
            return .object(members.map { JSONValue.Member(key: $0.key, value: $0.value) })
        case UInt8(ascii: "["):
            index += 1
            var elements: [JSONValue] = []
            if consume(UInt8(ascii: "]")) { return .array([]) }
            repeat {
                elements.append(try readValue(depth: depth + 1))
            } while consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "]"), "',' or ']'")
            return .array(elements)
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "t"):
            try readLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try readLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try readLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            switch try readNumber() {
            case .integer(let value): return .integer(value)
            case .number(let value): return .number(value)
            }
        default:
            throw fail("unexpected character")
        }
    }

    /// Reads and discards any value, without building it.
    mutating func skipValue(depth: Int = 0) throws(Failure) {
        guard depth < maxDepth else { throw fail("nested too deeply") }
        guard let byte = peek() else { throw fail("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"):
            try readObject(depth: depth) { (reader: inout JSONReader, _: JSONKey) throws(Failure) in
                try reader.skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "["):
            index += 1
            if consume(UInt8(ascii: "]")) { return }
            repeat { try skipValue(depth: depth + 1) } while consume(UInt8(ascii: ","))
            try expect(UInt8(ascii: "]"), "',' or ']'")
        default:
            _ = try readValue(depth: depth)
        }
    }

    private mutating func readLiteral(_ literal: StaticString) throws(Failure) {
        let length = literal.utf8CodeUnitCount
        guard index + length <= count else { throw fail("unexpected end of input") }
        let start = literal.utf8Start
        for offset in 0..<length where bytes[index + offset] != start[offset] {
            throw fail("unexpected character")
        }
        index += length
    }

    /// A number as read: not a `JSONValue`, an indirect enum whose every case is a heap allocation, so a
    /// token's dates are read without one.
    enum Number {
        /// Written without fraction or exponent, and fits in 64 bits.
        case integer(Int64)
        case number(Double)
    }

    mutating func readNumber() throws(Failure) -> Number {
        skipWhitespace()
        let start = index
        var isInteger = true
        if index < count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < count, isDigit(bytes[index]) else { throw fail("invalid number") }
        // The digits' value, read as they are passed: exact for up to 18 of them (every date and id a token
        // holds), which need no overflow checks; longer ones are parsed again below, checked.
        let digitsStart = index
        var magnitude: Int64 = 0
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < count, isDigit(bytes[index]) {
                magnitude = magnitude &* 10 &+ Int64(bytes[index] &- UInt8(ascii: "0"))
                index += 1
            }
        }
        let digits = index - digitsStart
        if index < count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < count, isDigit(bytes[index]) { index += 1 }
        }
        if index < count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < count, isDigit(bytes[index]) { index += 1 }
        }
        if isInteger {
            if digits <= 18 { return .integer(digitsStart > start ? -magnitude : magnitude) }
            if let value = parseInteger(start..<index) { return .integer(value) }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw fail("number out of range") }
        return .number(value)
    }

    /// An integer literal of more than 18 digits without going through `String`; nil when it does not fit
    /// in 64 bits.
    private func parseInteger(_ range: Range<Int>) -> Int64? {
        var position = range.lowerBound
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var value: Int64 = 0
        while position < range.upperBound {
            let digit = Int64(bytes[position] &- UInt8(ascii: "0"))
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) =
                negative
                ? shifted.subtractingReportingOverflow(digit)
                : shifted.addingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            value = next
            position += 1
        }
        return value
    }

    mutating func readString() throws(Failure) -> String {
        try expect(UInt8(ascii: "\""), "'\"'")
        // Fast path: no escapes, which is every string StoreKit writes.
        let start = index
        index = plainRunEnd(from: index, stoppingAtNonASCII: false)
        if index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                return try makeString(Self.string(UnsafeRawBufferPointer(rebasing: bytes[start..<index])), advancingPast: 1)
            }
            if byte < 0x20 { throw fail("control character in string") }
        }
        var scalars: [UInt8] = Array(bytes[start..<index])
        while index < count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                let string = scalars.withUnsafeBytes { Self.string($0) }
                return try makeString(string, advancingPast: 1)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < count else { throw fail("unterminated string") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escaped)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try readHex4()
                    if (0xD800..<0xDC00).contains(code) {
                        // A high surrogate must be followed by an escaped low surrogate.
                        guard index + 1 < count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                        else { throw fail("unpaired surrogate") }
                        index += 2
                        let low = try readHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(code) {
                        throw fail("unpaired surrogate")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw fail("invalid escape") }
                    scalars.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    throw fail("invalid escape")
                }
            default:
                if byte < 0x20 { throw fail("control character in string") }
                scalars.append(byte)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    /// The first index from `start` that ends a string's plain run: a `"`, a `\\`, a control byte (invalid
    /// there), or with `stoppingAtNonASCII` a byte from 0x80; `bytes.count` if none does. Sixteen bytes at a
    /// time (`ByteSearch`), as the token's strings and keys are most of its JSON.
    private func plainRunEnd(from start: Int, stoppingAtNonASCII: Bool) -> Int {
        Self.plainRunEnd(in: bytes, from: start, stoppingAtNonASCII: stoppingAtNonASCII)
    }

    static func plainRunEnd(in bytes: UnsafeRawBufferPointer, from start: Int, stoppingAtNonASCII: Bool) -> Int {
        var index = start
        guard let base = bytes.baseAddress else { return index }
        let quote = ByteSearch.Chunk(repeating: UInt8(ascii: "\"")), backslash = ByteSearch.Chunk(repeating: UInt8(ascii: "\\"))
        let space = ByteSearch.Chunk(repeating: 0x20), high = ByteSearch.Chunk(repeating: stoppingAtNonASCII ? 0x80 : 0xFF)
        while index + 16 <= bytes.count {
            let chunk = ByteSearch.chunk(base, at: index)
            let stops = (chunk .== quote) .| (chunk .== backslash) .| (chunk .< space) .| (chunk .>= high)
            if any(stops) { return index + ByteSearch.firstSet(stops) }
            index += 16
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || (stoppingAtNonASCII && byte >= 0x80) { break }
            index += 1
        }
        return index
    }

    /// A string read, or the failure to read it as UTF-8, then the closing quote passed.
    private mutating func makeString(_ string: String?, advancingPast closing: Int) throws(Failure) -> String {
        guard let string else { throw fail("invalid UTF-8 in string") }
        index += closing
        return string
    }

    /// `utf8` as a `String`, nil when it is not UTF-8.
    private static func string(_ utf8: UnsafeRawBufferPointer) -> String? {
        // ASCII needs no validation, and `String(validating:)` goes through unspecialised generic code:
        // every string a token holds is ASCII, so that path is kept for the rest.
        if ByteSearch.isASCII(utf8) { return String(decoding: utf8, as: UTF8.self) }
        return String(validating: utf8, as: UTF8.self)
    }

    private mutating func readHex4() throws(Failure) -> UInt32 {
        guard index + 4 <= count else { throw fail("invalid escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("invalid escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}

/// An object key, as `JSONReader.readObject` hands it over: valid only inside the call that got it, as
/// its ASCII form points into the reader's bytes.
struct JSONKey {
    private let ascii: UnsafeRawBufferPointer?
    private let decoded: String?

    init(ascii: UnsafeRawBufferPointer) {
        self.ascii = ascii
        self.decoded = nil
    }

    init(decoded: String) {
        self.ascii = nil
        self.decoded = decoded
    }

    var string: String { decoded ?? String(decoding: ascii!, as: UTF8.self) }

    func equals(_ name: StaticString) -> Bool {
        guard let ascii else { return decoded! == name.description }
        return ascii.equals(name)
    }
}
