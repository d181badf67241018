/// The two parameters StoreKit appends to a link-out URL, read from the raw query bytes.
///
/// Scans the bytes in place (no splitting into strings): this runs on every request.
public struct LinkOutQuery: Sendable, Equatable {
    /// `externalPurchaseToken`, percent-decoded; `+` is kept as `+` (it is base64 there).
    public var token: [UInt8]?
    /// `bundleId`, percent-decoded.
    public var bundleId: [UInt8]?

    public init(token: [UInt8]? = nil, bundleId: [UInt8]? = nil) {
        self.token = token
        self.bundleId = bundleId
    }

    /// Parses `query` (the bytes after `?`, without any `#fragment`). Other parameters are ignored.
    public static func parse(_ query: some Collection<UInt8>) -> Result<LinkOutQuery, TokenRejection> {
        var result = LinkOutQuery()
        var start = query.startIndex
        while start != query.endIndex {
            let end = query[start...].firstIndex(of: UInt8(ascii: "&")) ?? query.endIndex
            let pair = query[start..<end]
            start = end == query.endIndex ? end : query.index(after: end)
            guard !pair.isEmpty else { continue }
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            let key = pair[pair.startIndex..<equals]
            let value = equals == pair.endIndex ? pair[equals...] : pair[pair.index(after: equals)...]

            let isToken = key.elementsEqual("externalPurchaseToken".utf8)
            let isBundle = !isToken && key.elementsEqual("bundleId".utf8)
            guard isToken || isBundle else { continue }
            guard let decoded = percentDecode(value) else { return .failure(TokenRejection(.malformedQuery)) }
            if isToken {
                guard result.token == nil else { return .failure(TokenRejection(.duplicateParameter)) }
                result.token = decoded
            } else {
                guard result.bundleId == nil else { return .failure(TokenRejection(.duplicateParameter)) }
                result.bundleId = decoded
            }
        }
        return .success(result)
    }

    /// Decodes `%XX` escapes; nil on a malformed escape. `+` stays `+`.
    static func percentDecode(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        guard bytes.contains(UInt8(ascii: "%")) else { return Array(bytes) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            output.append(high << 4 | low)
        }
        return output
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
