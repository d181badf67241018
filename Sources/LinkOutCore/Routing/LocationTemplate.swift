/// A destination split once, at load, around the place where parameters go: everything before the
/// fragment plus the right separator, and the fragment. Building a Location is then two appends.
///
/// The destination was checked at load (absolute https, printable ASCII); the parameters are built by
/// `Gateway` from validated values, and the only request bytes among them (pass-through values) are
/// re-encoded by `PassThrough`. So no request can change the scheme, host or path, or smuggle CR/LF into
/// the header.
public struct LocationTemplate: Sendable, Equatable {
    public let destination: String
    /// The destination up to its fragment, with `?` or `&` after it, and the fragment: as bytes, copied
    /// straight into each Location.
    private let head: [UInt8]
    private let fragment: [UInt8]

    public init(destination: String) {
        self.destination = destination
        let utf8 = Array(destination.utf8)
        let hash = utf8.firstIndex(of: UInt8(ascii: "#")) ?? utf8.count
        var head = Array(utf8[..<hash])
        if let last = head.last, last == UInt8(ascii: "?") || last == UInt8(ascii: "&") {
            // Already ends in a separator.
        } else {
            head.append(head.contains(UInt8(ascii: "?")) ? UInt8(ascii: "&") : UInt8(ascii: "?"))
        }
        self.head = head
        self.fragment = Array(utf8[hash...])
    }

    /// `parameters` are `name=value` pieces already safe for a URL query.
    public func location(_ parameters: String) -> String {
        var parameters = parameters
        let count = parameters.utf8.count
        return parameters.withUTF8 { parameters in
            location(count) {
                UnsafeMutableRawBufferPointer($0).copyMemory(from: UnsafeRawBufferPointer(parameters))
                return count
            }
        }
    }

    public func location(_ query: CheckoutQuery) -> String {
        location(query.count) { query.write(into: $0) }
    }

    /// The Location in one allocation: head, the `count` bytes of parameters `write` puts at the start of
    /// the buffer it is given, fragment.
    private func location(_ count: Int, _ write: (UnsafeMutableRawBufferPointer) -> Int) -> String {
        guard count > 0 else { return destination }
        let total = head.count + count + fragment.count
        return String(unsafeUninitializedCapacity: total) { buffer in
            let out = UnsafeMutableRawBufferPointer(buffer)
            let fragmentStart = head.count + count
            head.withUnsafeBytes { out.copyMemory(from: $0) }
            _ = write(UnsafeMutableRawBufferPointer(rebasing: out[head.count..<fragmentStart]))
            fragment.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[fragmentStart...]).copyMemory(from: $0) }
            return total
        }
    }
}
