/// Base64 as StoreKit tokens arrive in the wild: Apple's own samples are padded in one place and unpadded
/// in another, browsers and proxies form-decode `+` into a space, and `=` often comes percent-encoded
/// (the caller has already turned `%3D` back into `=`). So this accepts both alphabets, a space for `+`,
/// and optional padding, and nothing else.
///
/// Written by hand because Foundation's `Data(base64Encoded:)` accepts only the standard, padded form and
/// costs about four times as much (bench/README.md, Method and anchors).
public enum TokenBase64 {
    private static let invalid: UInt8 = 0xFF

    /// Maps a byte to its 6-bit value in either alphabet; a space counts as `+`.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: " "))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// Decodes `text`, or returns nil if it is not base64 in any of the accepted forms.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        Array(text).withUnsafeBytes { decode($0) }
    }

    /// The request path's decoder: straight from the bytes the connection read, one table look-up per byte.
    public static func decode(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        var end = text.count
        // Up to two trailing '=' are padding; any other '=' is an error (the table refuses it).
        var padding = 0
        while padding < 2, end > 0, text[end - 1] == UInt8(ascii: "=") {
            end -= 1
            padding += 1
        }
        guard end % 4 != 1 else { return nil }
        if padding > 0, (end + padding) % 4 != 0 { return nil }

        var valid = false
        let output = [UInt8](unsafeUninitializedCapacity: end * 3 / 4) { output, count in
            valid = table.withUnsafeBufferPointer { table in
                // Whole groups of four characters make three bytes; the invalid marker 0xFF is the only
                // table value with its top bit set, so one test covers all four.
                var read = 0
                var written = 0
                while read + 4 <= end {
                    let a = table[Int(text[read])], b = table[Int(text[read + 1])]
                    let c = table[Int(text[read + 2])], d = table[Int(text[read + 3])]
                    if (a | b | c | d) & 0x80 != 0 { return false }
                    let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    output[written] = UInt8(truncatingIfNeeded: group >> 16)
                    output[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                    output[written + 2] = UInt8(truncatingIfNeeded: group)
                    read += 4
                    written += 3
                }
                // Two or three characters left make one or two bytes.
                if read < end {
                    let a = table[Int(text[read])], b = table[Int(text[read + 1])]
                    let c = read + 2 < end ? table[Int(text[read + 2])] : 0
                    if (a | b | c) & 0x80 != 0 { return false }
                    let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                    output[written] = UInt8(truncatingIfNeeded: group >> 16)
                    written += 1
                    if read + 2 < end {
                        output[written] = UInt8(truncatingIfNeeded: group >> 8)
                        written += 1
                    }
                }
                count = written
                return true
            }
            if !valid { count = 0 }
        }
        return valid ? output : nil
    }

    /// The URL-safe, unpadded form: safe to put in a query without escaping.
    public static func encodeURLSafe(_ bytes: some Collection<UInt8>) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int((accumulator >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 {
            output.append(alphabet[Int((accumulator << UInt32(6 - bits)) & 0x3F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}
