/// Copies the shopper's allowed parameters from the request's query into a Location, safely.
///
/// The value bytes come from the request, so each is re-checked here: unreserved characters, `+` and
/// well-formed `%XX` escapes pass as sent (their meaning to the checkout is unchanged), and every other
/// byte is percent-encoded. A Location built from them is printable ASCII with no `&`, `#` or space that
/// the request put there, so no parameter can end the query, start a fragment or split the header.
public enum PassThrough {
    /// At most this many parameters, each value at most `maxValueBytes` once encoded; more are dropped.
    public static let maxParameters = 16
    public static let maxValueBytes = 512

    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        isNameByte(byte) || byte == UInt8(ascii: "~")
    }

    /// Appends `name=value` to the checkout query for each query parameter
    /// matching `patterns` whose name is not in `taken` (the destination's own parameters and linkout's),
    /// in the order sent; a name sent twice passes once.
    public static func append(
        from query: UnsafeRawBufferPointer, patterns: [ParameterPattern], taken: Set<String>, to parameters: inout CheckoutQuery
    ) {
        guard !patterns.isEmpty, !query.isEmpty else { return }
        var passed: [String] = []
        var start = 0
        while start <= query.count, passed.count < maxParameters {
            var end = start
            while end < query.count, query[end] != UInt8(ascii: "&") { end += 1 }
            defer { start = end + 1 }
            var equals = start
            while equals < end, query[equals] != UInt8(ascii: "=") { equals += 1 }
            let name = UnsafeRawBufferPointer(rebasing: query[start..<equals])
            guard !name.isEmpty, name.allSatisfy(isNameByte), patterns.contains(where: { $0.matches(name) }) else { continue }
            let nameText = String(decoding: name, as: UTF8.self)
            guard !taken.contains(nameText), !passed.contains(nameText) else { continue }
            let value =
                equals < end ? UnsafeRawBufferPointer(rebasing: query[(equals + 1)..<end]) : UnsafeRawBufferPointer(start: nil, count: 0)
            guard let encoded = encodedValue(value) else { continue }
            passed.append(nameText)
            parameters.add(nameText, encoded)
        }
    }

    /// The value as it may appear in a Location, or nil when it is too long.
    static func encodedValue(_ value: UnsafeRawBufferPointer) -> String? {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(value.count)
        var index = 0
        while index < value.count {
            let byte = value[index]
            if isUnreserved(byte) || byte == UInt8(ascii: "+") {
                out.append(byte)
            } else if byte == UInt8(ascii: "%"), index + 2 < value.count,
                isHexDigit(value[index + 1]), isHexDigit(value[index + 2])
            {
                out.append(contentsOf: [byte, value[index + 1], value[index + 2]])
                index += 2
            } else {
                out.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
            guard out.count <= maxValueBytes else { return nil }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    /// The parameter names already in a destination URL's query, which pass-through must not repeat.
    public static func names(inQueryOf url: String) -> Set<String> {
        let utf8 = Array(url.utf8)
        guard let question = utf8.firstIndex(of: UInt8(ascii: "?")) else { return [] }
        let end = utf8.firstIndex(of: UInt8(ascii: "#")) ?? utf8.count
        guard question < end else { return [] }
        var names: Set<String> = []
        for pair in utf8[(question + 1)..<end].split(separator: UInt8(ascii: "&")) {
            let name = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false).first ?? []
            if !name.isEmpty { names.insert(String(decoding: name, as: UTF8.self)) }
        }
        return names
    }
}
