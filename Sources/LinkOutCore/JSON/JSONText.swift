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
        var text = text
        text.withUTF8 { appendEscaped($0, to: &output) }
        output.append(0x22)
    }

    /// The bytes that need no escape are appended a run at a time: the access log writes a few of these per
    /// request, and a byte-by-byte append was over half of its thread's time (bench/RESULTS.md).
    static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        var runStart = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
            if runStart < index { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
            runStart = index + 1
            switch byte {
            case 0x22:
                output.append(0x5C)
                output.append(0x22)
            case 0x5C:
                output.append(0x5C)
                output.append(0x5C)
            case 0x0A:
                output.append(0x5C)
                output.append(0x6E)
            case 0x0D:
                output.append(0x5C)
                output.append(0x72)
            case 0x09:
                output.append(0x5C)
                output.append(0x74)
            default: output.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
            }
        }
        if runStart < bytes.count { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A decimal integer as ASCII digits (JSON numbers, `Content-Length`), without a `String`: the digits
    /// are made right to left in a scratch buffer on the stack, then appended at once.
    public static func appendDecimal(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(0x2D) }
        var rest = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                rest /= 10
            } while rest > 0
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }
}
