extension UnsafeRawBufferPointer {
    /// Whether these bytes are exactly `text`'s: a known name (a query parameter, a JSON key, a built-in
    /// path) matched where the request holds it, without making a `String` to compare.
    @inline(__always)
    func equals(_ text: StaticString) -> Bool {
        guard count == text.utf8CodeUnitCount else { return false }
        let expected = text.utf8Start
        for offset in 0..<count where self[offset] != expected[offset] { return false }
        return true
    }

    /// Whether these bytes start with `text`'s.
    @inline(__always)
    func starts(with text: StaticString) -> Bool {
        count >= text.utf8CodeUnitCount && UnsafeRawBufferPointer(rebasing: self[0..<text.utf8CodeUnitCount]).equals(text)
    }

    /// Whether these bytes are exactly `other`'s.
    @inline(__always)
    func equals(_ other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        for offset in 0..<count where self[offset] != other[offset] { return false }
        return true
    }
}
