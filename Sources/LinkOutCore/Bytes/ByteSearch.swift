/// Finding one byte value in a run of bytes, eight at a time: the request path looks for `?`, `#`, `&`,
/// `=` and `%` across a query of some 250 bytes on every request, where a byte-by-byte loop costs about
/// ten instructions a byte and this costs about two.
enum ByteSearch {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let topBits: UInt64 = 0x8080_8080_8080_8080

    /// The first index in `from..<to` whose byte is `byte`, or `to`.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from: Int = 0, to: Int) -> Int {
        var index = from
        guard let base = bytes.baseAddress else { return to }
        let pattern = ones &* UInt64(byte)
        while index &+ 8 <= to {
            // A byte equal to `byte` is zero in `word`; the classic zero-byte test below flags the first
            // such byte exactly (a borrow can flag a later byte too, never an earlier one), and in
            // little-endian order the lowest flagged bit is the first byte.
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)) ^ pattern
            let zeros = (word &- ones) & ~word & topBits
            if zeros != 0 { return index &+ zeros.trailingZeroBitCount &>> 3 }
            index &+= 8
        }
        while index < to, base.load(fromByteOffset: index, as: UInt8.self) != byte { index &+= 1 }
        return index
    }

    /// Whether `byte` occurs in `bytes`.
    @inline(__always)
    static func contains(_ byte: UInt8, in bytes: UnsafeRawBufferPointer) -> Bool {
        firstIndex(of: byte, in: bytes, to: bytes.count) < bytes.count
    }
}
