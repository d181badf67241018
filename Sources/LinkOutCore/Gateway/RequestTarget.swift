/// A request target's path (up to `?` or `#`) and query (between `?` and `#`), as views of the bytes the
/// connection read. Links' paths are matched byte for byte (`LinkPathRules`), so the path never needs to
/// become a `String`.
struct RequestTarget {
    let path: UnsafeRawBufferPointer
    let query: UnsafeRawBufferPointer

    init(_ target: UnsafeRawBufferPointer) {
        let fragment = ByteSearch.firstIndex(of: UInt8(ascii: "#"), in: target, to: target.count)
        let pathEnd = ByteSearch.firstIndex(of: UInt8(ascii: "?"), in: target, to: fragment)
        path = UnsafeRawBufferPointer(rebasing: target[0..<pathEnd])
        // A `#` before any `?` leaves no query.
        query = UnsafeRawBufferPointer(rebasing: target[min(pathEnd + 1, fragment)..<fragment])
    }
}
