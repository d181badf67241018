/// A destination split once, at load, around the place where parameters go: everything before the
/// fragment plus the right separator, and the fragment. Building a Location is then two appends.
///
/// The destination was checked at load (absolute https, printable ASCII); the parameters are built by
/// `Gateway` from validated values, and the only request bytes among them (pass-through values) are
/// re-encoded by `PassThrough`. So no request can change the scheme, host or path, or smuggle CR/LF into
/// the header.
public struct LocationTemplate: Sendable, Equatable {
    public let destination: String
    private let head: String
    private let fragment: String

    public init(destination: String) {
        self.destination = destination
        let utf8 = Array(destination.utf8)
        let hash = utf8.firstIndex(of: UInt8(ascii: "#")) ?? utf8.count
        let base = utf8[..<hash]
        var head = String(decoding: base, as: UTF8.self)
        if let last = base.last, last == UInt8(ascii: "?") || last == UInt8(ascii: "&") {
            // Already ends in a separator.
        } else {
            head += base.contains(UInt8(ascii: "?")) ? "&" : "?"
        }
        self.head = head
        self.fragment = String(decoding: utf8[hash...], as: UTF8.self)
    }

    /// `parameters` are `name=value` pieces already safe for a URL query.
    public func location(_ parameters: String) -> String {
        guard !parameters.isEmpty else { return destination }
        var location = head
        location.reserveCapacity(head.utf8.count + parameters.utf8.count + fragment.utf8.count)
        location += parameters
        location += fragment
        return location
    }
}
