/// The two parameters StoreKit appends to a link-out URL, read from the raw query bytes.
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
        Array(query).withUnsafeBytes { bytes in
            scan(bytes).flatMap { positions in
                guard let token = positions.decodedToken(in: bytes), let bundleId = positions.decodedBundleId(in: bytes) else {
                    return .failure(TokenRejection(.malformedQuery))
                }
                return .success(LinkOutQuery(token: token?.copied, bundleId: bundleId?.copied))
            }
        }
    }

    /// Where the two values sit in the query, found in one pass without copying (this runs on every
    /// request). A value with no `%` is used in place; one with escapes is decoded into a copy.
    public struct Positions: Sendable {
        public var token: Range<Int>?
        public var bundleId: Range<Int>?
        /// The values `scan` saw no `%` in while it passed them, which then need no second look.
        var unescapedToken: Range<Int>?
        var unescapedBundleId: Range<Int>?

        /// The token's bytes: `.some(nil)` when absent, `nil` when an escape is malformed.
        public func decodedToken(in query: UnsafeRawBufferPointer) -> Value?? { value(token, unescaped: unescapedToken, in: query) }
        public func decodedBundleId(in query: UnsafeRawBufferPointer) -> Value?? {
            value(bundleId, unescaped: unescapedBundleId, in: query)
        }

        private func value(_ range: Range<Int>?, unescaped: Range<Int>?, in query: UnsafeRawBufferPointer) -> Value?? {
            guard let range else { return .some(nil) }
            let raw = UnsafeRawBufferPointer(rebasing: query[range])
            guard range != unescaped, ByteSearch.contains(UInt8(ascii: "%"), in: raw) else { return .some(.inPlace(raw)) }
            guard let decoded = percentDecode(raw) else { return nil }
            return .some(.decoded(decoded))
        }
    }

    /// A parameter's value: the query's own bytes, or a decoded copy.
    public enum Value {
        case inPlace(UnsafeRawBufferPointer)
        case decoded([UInt8])

        public var isEmpty: Bool { count == 0 }

        public var count: Int {
            switch self {
            case .inPlace(let bytes): bytes.count
            case .decoded(let bytes): bytes.count
            }
        }

        public var copied: [UInt8] { withBytes { Array($0) } }

        public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            switch self {
            case .inPlace(let bytes): body(bytes)
            case .decoded(let bytes): bytes.withUnsafeBytes(body)
            }
        }
    }

    public static func scan(_ query: UnsafeRawBufferPointer) -> Result<Positions, TokenRejection> {
        var positions = Positions()
        var start = 0
        let end = query.count
        while start < end {
            // The pair runs to the next '&'; a '%' on the way is noted (the last one is all that matters:
            // whether the value holds one), so a value without escapes is not searched again.
            var pairEnd = start
            var lastPercent = -1
            while true {
                pairEnd = ByteSearch.firstIndex(of: UInt8(ascii: "&"), or: UInt8(ascii: "%"), in: query, from: pairEnd, to: end)
                guard pairEnd < end, query[pairEnd] == UInt8(ascii: "%") else { break }
                lastPercent = pairEnd
                pairEnd += 1
            }
            // The key runs to the pair's first '='; only the two names matter, so the pair is compared with
            // each where its key would end, and no '=' is searched for.
            let pair = UnsafeRawBufferPointer(rebasing: query[start..<pairEnd])
            if let value = Self.value(of: "externalPurchaseToken", in: pair, at: start) {
                guard positions.token == nil else { return .failure(TokenRejection(.duplicateParameter)) }
                positions.token = value
                positions.unescapedToken = lastPercent < value.lowerBound ? value : nil
            } else if let value = Self.value(of: "bundleId", in: pair, at: start) {
                guard positions.bundleId == nil else { return .failure(TokenRejection(.duplicateParameter)) }
                positions.bundleId = value
                positions.unescapedBundleId = lastPercent < value.lowerBound ? value : nil
            }
            start = pairEnd + 1
        }
        return .success(positions)
    }

    /// The range of a pair's value in the query when the pair's key is `name`: the pair is `name` alone, or
    /// starts `name=`. `offset`: where the pair starts in the query.
    @inline(__always)
    private static func value(of name: StaticString, in pair: UnsafeRawBufferPointer, at offset: Int) -> Range<Int>? {
        let length = name.utf8CodeUnitCount
        guard pair.starts(with: name), pair.count == length || pair[length] == UInt8(ascii: "=") else { return nil }
        return offset + min(length + 1, pair.count)..<offset + pair.count
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
