/// A pass-through rule: an exact parameter name, or a prefix when it ends in `*`.
public struct ParameterPattern: Sendable, Equatable, CustomStringConvertible {
    public let text: String
    private let prefix: [UInt8]
    private let isPrefix: Bool

    /// nil when the text is not 1-64 of `A-Z a-z 0-9 . _ -`, optionally ending in one `*`.
    public init?(_ text: String) {
        var bytes = Array(text.utf8)
        isPrefix = bytes.last == UInt8(ascii: "*")
        if isPrefix { bytes.removeLast() }
        guard (1...64).contains(bytes.count), bytes.allSatisfy(PassThrough.isNameByte) else { return nil }
        self.text = text
        self.prefix = bytes
    }

    public func matches(_ name: UnsafeRawBufferPointer) -> Bool {
        if isPrefix {
            guard name.count >= prefix.count else { return false }
        } else {
            guard name.count == prefix.count else { return false }
        }
        for index in prefix.indices where name[index] != prefix[index] { return false }
        return true
    }

    public var description: String { text }
}
