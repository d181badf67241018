/// Finding one byte value in a run of bytes, eight at a time: the request path looks for `?`, `#`, `&`,
/// `=` and `%` across a query of some 250 bytes on every request, where a byte-by-byte loop costs about
/// ten instructions a byte and this costs about two.
enum ByteSearch {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let topBits: UInt64 = 0x8080_8080_8080_8080

    // The flags below mark a byte of a word by its top bit. Each is exact for the lowest byte it flags (a
    // borrow can flag a later byte too, never an earlier one), and in little-endian order the lowest
    // flagged bit is the first byte in memory; so the first match is `trailingZeroBitCount / 8`.

    /// The bytes of `word` equal to `byte`: they are the zero bytes of `word ^ byte…byte`.
    @inline(__always)
    static func bytes(of word: UInt64, equalTo byte: UInt8) -> UInt64 {
        bytes(of: word ^ (ones &* UInt64(byte)), below: 1)
    }

    /// The bytes of `word` below `bound` (at most 0x80).
    @inline(__always)
    static func bytes(of word: UInt64, below bound: UInt8) -> UInt64 {
        (word &- ones &* UInt64(bound)) & ~word & topBits
    }

    /// The eight bytes at `offset`, the first in the lowest bits.
    @inline(__always)
    static func word(_ base: UnsafeRawPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The first index in `from..<to` whose byte is `byte`, or `to`.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from: Int = 0, to: Int) -> Int {
        var index = from
        guard let base = bytes.baseAddress else { return to }
        while index &+ 8 <= to {
            let found = Self.bytes(of: word(base, at: index), equalTo: byte)
            if found != 0 { return index &+ found.trailingZeroBitCount &>> 3 }
            index &+= 8
        }
        while index < to, base.load(fromByteOffset: index, as: UInt8.self) != byte { index &+= 1 }
        return index
    }

    /// Whether every byte is below 0x80.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var high: UInt64 = 0
        var index = 0
        while index &+ 8 <= bytes.count {
            high |= word(base, at: index)
            index &+= 8
        }
        while index < bytes.count {
            high |= UInt64(base.load(fromByteOffset: index, as: UInt8.self))
            index &+= 1
        }
        return high & topBits == 0
    }

    /// Whether `byte` occurs in `bytes`.
    @inline(__always)
    static func contains(_ byte: UInt8, in bytes: UnsafeRawBufferPointer) -> Bool {
        firstIndex(of: byte, in: bytes, to: bytes.count) < bytes.count
    }
}
