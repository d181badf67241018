/// Reading a provider's event: members by name, a path at a time. A missing member, a `null` and a value
/// of another type all read as nil; what is required is checked by whoever reads it, with its path.
extension JSONValue {
    public subscript(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        // The last of duplicated keys wins, as in most JSON readers (the signature covered the bytes anyway).
        return members.last { $0.key == key }?.value
    }

    /// The value at a dotted path (`data.object.customer_details.address.country`).
    public func at(_ path: String) -> JSONValue? {
        var value: JSONValue? = self
        for key in path.split(separator: ".") { value = value?[String(key)] }
        return value
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// An integer, or a string of digits (Paddle sends amounts as strings in the lowest denomination).
    public var int64Value: Int64? {
        switch self {
        case .integer(let number): return number
        case .string(let text):
            guard !text.isEmpty, text.count <= 19, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) else { return nil }
            return Int64(text)
        default: return nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    public func string(_ path: String) -> String? { at(path)?.stringValue }
    public func int64(_ path: String) -> Int64? { at(path)?.int64Value }

    /// A Unix time in seconds (Stripe's `created`, `period.start`), in milliseconds; nil when absent or not
    /// between 1970 and the end of year 9999, so that nothing done with it can overflow (a signed event with
    /// `"created": 9999999999999999` once trapped the gateway; found through fuzz-payment-webhook).
    public func unixSecondsAsMs(_ path: String) -> Int64? {
        guard let seconds = int64(path), (0...253_402_300_799).contains(seconds) else { return nil }
        return seconds * 1000
    }
}
