import Testing

@testable import LinkOutCore

/// The reader scans strings and keys eight bytes at a time: every kind of byte that ends a plain run is put
/// at every offset across those eight-byte steps, in a value and in a key.
@Suite("JSONReader")
struct JSONReaderTests {
    private func parse(_ bytes: [UInt8]) -> JSONValue? { try? JSONValue.parse(bytes) }

    @Test("escapes, other characters, control bytes and bad UTF-8 at every offset of a string and a key")
    func everyOffset() {
        for before in 0..<20 {
            for after in [0, 1, 7, 8, 9] {
                let head = String(repeating: "a", count: before), tail = String(repeating: "b", count: after)
                let cases: [(inner: [UInt8], expected: String?)] = [
                    (Array("\(head)\(tail)".utf8), "\(head)\(tail)"),
                    (Array("\(head)\\n\(tail)".utf8), "\(head)\n\(tail)"),
                    (Array("\(head)\\\"\(tail)".utf8), "\(head)\"\(tail)"),
                    (Array("\(head)\\u00e9\(tail)".utf8), "\(head)é\(tail)"),
                    (Array("\(head)é\(tail)".utf8), "\(head)é\(tail)"),
                    (Array(head.utf8) + [0x09] + Array(tail.utf8), nil),
                    (Array(head.utf8) + [0x1F] + Array(tail.utf8), nil),
                    (Array(head.utf8) + [0xFF] + Array(tail.utf8), nil),
                    (Array(head.utf8) + [0x7F] + Array(tail.utf8), "\(head)\u{7F}\(tail)"),
                    (Array(head.utf8) + [0x20] + Array(tail.utf8), "\(head) \(tail)"),
                ]
                for (inner, expected) in cases {
                    let value = [0x22] + inner + [0x22]
                    #expect(parse(value) == expected.map { .string($0) }, "value \(inner)")
                    #expect(
                        parse(Array("{".utf8) + value + Array(":1}".utf8))
                            == expected.map { .object([.init(key: $0, value: .integer(1))]) }, "key \(inner)")
                    // Unterminated: the run reaches the end of the input.
                    #expect(parse([0x22] + inner) == nil)
                }
            }
        }
    }

    @Test("integers: up to 18 digits unchecked, longer ones checked for overflow, others as doubles")
    func integers() {
        #expect(parse(Array("123456789012345678".utf8)) == .integer(123_456_789_012_345_678))
        #expect(parse(Array("-123456789012345678".utf8)) == .integer(-123_456_789_012_345_678))
        #expect(parse(Array("9223372036854775807".utf8)) == .integer(Int64.max))
        #expect(parse(Array("-9223372036854775808".utf8)) == .integer(Int64.min))
        #expect(parse(Array("9223372036854775808".utf8)) == .number(9_223_372_036_854_775_808))
        #expect(parse(Array("0".utf8)) == .integer(0) && parse(Array("-0".utf8)) == .integer(0))
        #expect(parse(Array("1.5".utf8)) == .number(1.5) && parse(Array("1e2".utf8)) == .number(100))
        #expect(parse(Array("01".utf8)) == nil && parse(Array("-".utf8)) == nil)
    }

    @Test("literals, whole and cut short, at the end of the input and inside it")
    func literals() {
        #expect(
            parse(Array("true".utf8)) == .bool(true) && parse(Array("false".utf8)) == .bool(false) && parse(Array("null".utf8)) == .null)
        #expect(parse(Array("[true,null]".utf8)) == .array([.bool(true), .null]))
        for cut in ["t", "tru", "fals", "nul", "[nul", "truex", "nulL"] { #expect(parse(Array(cut.utf8)) == nil, "\(cut)") }
    }
}
