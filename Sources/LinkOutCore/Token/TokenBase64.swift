/// Base64 as StoreKit tokens arrive in the wild: Apple's own samples are padded in one place and unpadded
/// in another, browsers and proxies form-decode `+` into a space, and `=` often comes percent-encoded
/// (the caller has already turned `%3D` back into `=`). So this accepts both alphabets, a space for `+`,
/// and optional padding, and nothing else.
///
/// Written by hand because Foundation's `Data(base64Encoded:)` accepts only the standard, padded form and
/// costs about four times as much (bench/README.md, Method and anchors).
public enum TokenBase64 {
    /// Each byte's 6-bit value in either alphabet (a space counts as `+`), nil for the rest.
    private static func value(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(byte - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: " "): 62
        case UInt8(ascii: "/"), UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// Set in a table entry for a byte that is not base64; above the 24 bits a group of four makes.
    private static let invalid: UInt32 = 1 << 31

    /// For each of a group's four positions, 256 entries: the byte's value already shifted to that
    /// position's place in the group's 24 bits, or `invalid`. A group is then four look-ups OR'ed together
    /// and one test, about 20 instructions (shifting and testing each value cost 32).
    private static let placed: [UInt32] = (0..<4).flatMap { position in
        (0...255).map { byte in value(UInt8(byte)).map { $0 << (18 - 6 * position) } ?? invalid }
    }

    /// Decodes `text`, or returns nil if it is not base64 in any of the accepted forms.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        Array(text).withUnsafeBytes { decode($0) }
    }

    /// The request path's decoder: straight from the bytes the connection read, one table look-up per byte.
    public static func decode(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: decodedCapacity(text.count)) { output, count in
            guard let written = decode(text, into: UnsafeMutableRawBufferPointer(output)) else {
                valid = false
                count = 0
                return
            }
            count = written
        }
        return valid ? output : nil
    }

    /// Room enough for the bytes `count` characters decode to.
    static func decodedCapacity(_ count: Int) -> Int { count * 3 / 4 }

    /// Decodes `text` into `output` (at least `decodedCapacity(text.count)` bytes): the number of bytes
    /// written, nil when `text` is not base64 in any of the accepted forms. For a caller that decodes into
    /// a buffer of its own rather than a new array (the request path, which only reads the bytes once).
    static func decode(_ text: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int? {
        var end = text.count
        // Up to two trailing '=' are padding; any other '=' is an error (the table refuses it).
        var padding = 0
        while padding < 2, end > 0, text[end - 1] == UInt8(ascii: "=") {
            end -= 1
            padding += 1
        }
        guard end % 4 != 1 else { return nil }
        if padding > 0, (end + padding) % 4 != 0 { return nil }

        return placed.withUnsafeBufferPointer { placed -> Int? in
            func group(_ read: Int, _ characters: Int) -> UInt32 {
                var group: UInt32 = 0
                for position in 0..<characters { group |= placed[position << 8 | Int(text[read + position])] }
                return group
            }
            var read = 0
            var written = 0
            // Whole groups of four characters make three bytes.
            while read &+ 4 <= end {
                let bits = group(read, 4)
                if bits & invalid != 0 { return nil }
                output[written] = UInt8(truncatingIfNeeded: bits >> 16)
                output[written &+ 1] = UInt8(truncatingIfNeeded: bits >> 8)
                output[written &+ 2] = UInt8(truncatingIfNeeded: bits)
                read &+= 4
                written &+= 3
            }
            // Two or three characters left make one or two bytes.
            if read < end {
                let bits = group(read, end - read)
                if bits & invalid != 0 { return nil }
                output[written] = UInt8(truncatingIfNeeded: bits >> 16)
                written += 1
                if read + 2 < end {
                    output[written] = UInt8(truncatingIfNeeded: bits >> 8)
                    written += 1
                }
            }
            return written
        }
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
