/// Finding bytes in a run of bytes sixteen at a time: the request path looks for `#`, `&`, `=` and `%`
/// across a query of some 250 bytes, and for the end of each string in the token's JSON, on every
/// request. A byte-by-byte loop costs four or five instructions a byte; a 16-byte vector compare (SSE2 or
/// NEON, which `SIMD16` compiles to) under one.
enum ByteSearch {
    typealias Chunk = SIMD16<UInt8>

    /// The 16 bytes at `offset`.
    @inline(__always)
    static func chunk(_ base: UnsafeRawPointer, at offset: Int) -> Chunk {
        base.loadUnaligned(fromByteOffset: offset, as: Chunk.self)
    }

    /// The first lane (0..<16) where `mask` is set, for a mask known to have one (`any`, a cheaper test,
    /// asks first): the lanes as two 64-bit words, whose lowest set bit, in little-endian order, is the
    /// first lane's.
    @inline(__always)
    static func firstSet(_ mask: SIMDMask<Chunk.MaskStorage>) -> Int {
        let words = unsafeBitCast(Chunk(repeating: 0).replacing(with: 0xFF, where: mask), to: SIMD2<UInt64>.self)
        let low = UInt64(littleEndian: words[0])
        return low != 0 ? low.trailingZeroBitCount &>> 3 : 8 &+ UInt64(littleEndian: words[1]).trailingZeroBitCount &>> 3
    }

    /// The first index in `from..<to` whose byte is `byte`, or `to`.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from: Int = 0, to: Int) -> Int {
        guard let base = bytes.baseAddress else { return to }
        var index = from
        // Vectors made with `repeating:`, not scalars beside the operators: those go through slow generic code.
        let pattern = Chunk(repeating: byte)
        // 32 bytes a round while nothing is found (a target's '#' is looked for over some 250 bytes, the
        // token's '&' over 200); the loop below then finds which byte it is.
        while index &+ 32 <= to, !any((chunk(base, at: index) .== pattern) .| (chunk(base, at: index &+ 16) .== pattern)) {
            index &+= 32
        }
        while index &+ 16 <= to {
            let found = chunk(base, at: index) .== pattern
            if any(found) { return index &+ firstSet(found) }
            index &+= 16
        }
        while index < to, base.load(fromByteOffset: index, as: UInt8.self) != byte { index &+= 1 }
        return index
    }

    /// The first index in `from..<to` whose byte is `a` or `b`, or `to`.
    @inline(__always)
    static func firstIndex(of a: UInt8, or b: UInt8, in bytes: UnsafeRawBufferPointer, from: Int = 0, to: Int) -> Int {
        guard let base = bytes.baseAddress else { return to }
        var index = from
        let first = Chunk(repeating: a), second = Chunk(repeating: b)
        @inline(__always) func matches(_ chunk: Chunk) -> SIMDMask<Chunk.MaskStorage> { (chunk .== first) .| (chunk .== second) }
        while index &+ 32 <= to, !any(matches(chunk(base, at: index)) .| matches(chunk(base, at: index &+ 16))) {
            index &+= 32
        }
        while index &+ 16 <= to {
            let found = matches(chunk(base, at: index))
            if any(found) { return index &+ firstSet(found) }
            index &+= 16
        }
        while index < to {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            if byte == a || byte == b { break }
            index &+= 1
        }
        return index
    }

    /// Whether `byte` occurs in `bytes`.
    @inline(__always)
    static func contains(_ byte: UInt8, in bytes: UnsafeRawBufferPointer) -> Bool {
        firstIndex(of: byte, in: bytes, to: bytes.count) < bytes.count
    }

    /// Whether every byte is below 0x80.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var high = Chunk(repeating: 0)
        var index = 0
        while index &+ 16 <= bytes.count {
            high |= chunk(base, at: index)
            index &+= 16
        }
        var tail: UInt8 = 0
        while index < bytes.count {
            tail |= base.load(fromByteOffset: index, as: UInt8.self)
            index &+= 1
        }
        let words = unsafeBitCast(high, to: SIMD2<UInt64>.self)
        return (words[0] | words[1]) & 0x8080_8080_8080_8080 == 0 && tail < 0x80
    }
}
