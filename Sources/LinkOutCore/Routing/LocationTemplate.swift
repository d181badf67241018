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
        return parameters.withUTF8 { location(UnsafeRawBufferPointer($0)) }
    }

    public func location(_ query: CheckoutQuery) -> String {
        query.bytes.withUnsafeBytes { location($0) }
    }

    /// The Location in one allocation: head, parameters, fragment.
    private func location(_ parameters: UnsafeRawBufferPointer) -> String {
        guard !parameters.isEmpty else { return destination }
        let count = head.count + parameters.count + fragment.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            let out = UnsafeMutableRawBufferPointer(buffer)
            let fragmentStart = head.count + parameters.count
            head.withUnsafeBytes { out.copyMemory(from: $0) }
            UnsafeMutableRawBufferPointer(rebasing: out[head.count..<fragmentStart]).copyMemory(from: parameters)
            fragment.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[fragmentStart...]).copyMemory(from: $0) }
            return count
        }
    }
}
