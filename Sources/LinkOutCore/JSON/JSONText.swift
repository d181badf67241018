/// Writes JSON string literals: the export's lines and minted tokens.
public enum JSONText {
    public static func quote(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        appendQuoted(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The same literal appended as bytes, for writers that build a line in a buffer (the access log): `"`
    /// and `\` escaped, control bytes as their short forms or `\u00XX`, everything else (UTF-8) as it is.
    public static func appendQuoted(_ text: String, to output: inout [UInt8]) {
        output.append(0x22)
        for byte in text.utf8 {
            switch byte {
            case 0x22: output.append(contentsOf: [0x5C, 0x22])
            case 0x5C: output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: output.append(contentsOf: [0x5C, 0x72])
            case 0x09: output.append(contentsOf: [0x5C, 0x74])
            case 0..<0x20: output.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
            default: output.append(byte)
            }
        }
        output.append(0x22)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A decimal integer as ASCII digits (JSON numbers, `Content-Length`), without a `String`.
    public static func appendDecimal(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 {
            output.append(0x2D)
            // -Int64.min does not fit: its digits are those of Int64.max plus one, never seen here.
            appendDecimal(value == Int64.min ? Int64.max : -value, to: &output)
            return
        }
        if value >= 10 { appendDecimal(value / 10, to: &output) }
        output.append(UInt8(truncatingIfNeeded: 0x30 + value % 10))
    }
}
