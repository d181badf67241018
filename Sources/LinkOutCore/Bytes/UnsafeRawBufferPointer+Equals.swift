extension UnsafeRawBufferPointer {
    /// Whether these bytes are exactly `text`'s: a known name (a query parameter, a JSON key, a built-in
    /// path) matched where the request holds it, without making a `String` to compare.
    @inline(__always)
    func equals(_ text: StaticString) -> Bool {
        count == text.utf8CodeUnitCount && Self.equal(baseAddress, UnsafeRawPointer(text.utf8Start), count: count)
    }

    /// Whether these bytes start with `text`'s.
    @inline(__always)
    func starts(with text: StaticString) -> Bool {
        count >= text.utf8CodeUnitCount && Self.equal(baseAddress, UnsafeRawPointer(text.utf8Start), count: text.utf8CodeUnitCount)
    }

    /// Whether these bytes are exactly `other`'s.
    @inline(__always)
    func equals(_ other: UnsafeRawBufferPointer) -> Bool {
        count == other.count && Self.equal(baseAddress, other.baseAddress, count: count)
    }

    /// Whether `count` bytes at `a` and `b` are the same, eight at a time (a token's JSON keys are 8 to 19
    /// bytes).
    private static func equal(_ a: UnsafeRawPointer?, _ b: UnsafeRawPointer?, count: Int) -> Bool {
        guard count > 0 else { return true }
        guard let a, let b else { return false }
        var offset = 0
        while offset &+ 8 <= count {
            if a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) != b.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                return false
            }
            offset &+= 8
        }
        while offset < count {
            if a.load(fromByteOffset: offset, as: UInt8.self) != b.load(fromByteOffset: offset, as: UInt8.self) { return false }
            offset &+= 1
        }
        return true
    }
}
