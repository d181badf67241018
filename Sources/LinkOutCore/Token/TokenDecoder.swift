/// Turns the `externalPurchaseToken` parameter's bytes into an `ExternalPurchaseToken`, checking shape
/// only (fields present, types right, id well-formed). Policy (allow-list, dates) is `TokenValidator`'s.
public enum TokenDecoder {
    /// - Parameter encoded: the parameter's value after percent-decoding.
    public static func decode(_ encoded: [UInt8], maxLength: Int) -> Result<ExternalPurchaseToken, TokenRejection> {
        encoded.withUnsafeBytes { decode($0, maxLength: maxLength) }
    }

    public static func decode(_ encoded: UnsafeRawBufferPointer, maxLength: Int) -> Result<ExternalPurchaseToken, TokenRejection> {
        guard encoded.count <= maxLength else { return .failure(TokenRejection(.tokenTooLong)) }
        // The JSON is read once, straight from a buffer on the stack: a token needs no array of its own.
        return withUnsafeTemporaryAllocation(byteCount: TokenBase64.decodedCapacity(encoded.count), alignment: 1) { buffer in
            guard let count = TokenBase64.decode(encoded, into: buffer) else { return .failure(TokenRejection(.tokenNotBase64)) }
            return decodeJSON(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// Reads the token's JSON object. Unknown fields are skipped, so a field Apple adds later does not
    /// turn every token away; a known field given twice is refused, since either copy could be the lie.
    static func decodeJSON(_ json: [UInt8]) -> Result<ExternalPurchaseToken, TokenRejection> {
        json.withUnsafeBytes { decodeJSON($0) }
    }

    static func decodeJSON(_ json: UnsafeRawBufferPointer) -> Result<ExternalPurchaseToken, TokenRejection> {
        // StoreKit's own compact form in one tight pass; any other JSON through the general reader.
        guard let fields = CompactTokenJSON.fields(json) ?? readFields(json) else { return .failure(TokenRejection(.tokenNotJSON)) }
        return fields.token()
    }

    /// The known fields of any JSON object, with `JSONReader`; nil when the bytes are not one JSON object
    /// or repeat a known field.
    static func readFields(_ json: UnsafeRawBufferPointer) -> TokenFields? {
        var fields = TokenFields()
        var seen: UInt8 = 0
        var reader = JSONReader(json, maxDepth: 8)
        do {
            try reader.readObject { (reader: inout JSONReader, key: JSONKey) throws(JSONReader.Failure) in
                guard let position = TokenFields.names.firstIndex(where: { key.equals($0.name) }) else {
                    try reader.skipValue(depth: 1)
                    return
                }
                let field = TokenFields.names[position].field
                guard seen & (1 << position) == 0 else { throw reader.fail("duplicate field") }
                seen |= 1 << position
                // Read each field as the type it should have, without building a JSONValue; anything else
                // is skipped (still checked as JSON) and remembered as the wrong type.
                let first = reader.peek()
                switch field {
                case .appAppleId, .tokenCreationDate, .tokenExpirationDate:
                    var value: Int64?
                    if let first, first == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) {
                        if case .integer(let number) = try reader.readNumber() { value = number }
                    } else {
                        try reader.skipValue(depth: 1)
                    }
                    guard let number = value else {
                        if fields.wrongType == nil { fields.wrongType = field }
                        return
                    }
                    fields.set(field, number)
                case .bundleId, .externalPurchaseId, .tokenType:
                    guard first == UInt8(ascii: "\"") else {
                        try reader.skipValue(depth: 1)
                        if fields.wrongType == nil { fields.wrongType = field }
                        return
                    }
                    fields.set(field, try reader.readString())
                }
            }
            reader.skipWhitespace()
            guard reader.atEnd else { throw reader.fail("data after the object") }
        } catch {
            return nil
        }
        return fields
    }
}

/// The shape of an `externalPurchaseId`: a UUID (8-4-4-4-12 hex digits, either case), optionally after
/// `SANDBOX` and one `_` or `-`. Only these bytes can ever reach a Location header or the store key.
public enum ExternalPurchaseID {
    public static func isValid(_ id: String) -> Bool {
        if let result = id.utf8.withContiguousStorageIfAvailable({ isValid(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(id.utf8).withUnsafeBytes { isValid($0) }
    }

    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var start = 0
        if bytes.starts(with: "SANDBOX") {
            start = 7
            if start < bytes.count, bytes[start] == UInt8(ascii: "_") || bytes[start] == UInt8(ascii: "-") {
                start += 1
            }
        }
        guard bytes.count - start == 36 else { return false }
        let uuid = UnsafeRawBufferPointer(rebasing: bytes[start...])
        // 8-4-4-4-12 hex digits in either case, with dashes between: the dashes where they belong, and the
        // bytes' weights adding up to the four dashes' alone.
        guard uuid[8] == UInt8(ascii: "-"), uuid[13] == UInt8(ascii: "-"), uuid[18] == UInt8(ascii: "-"),
            uuid[23] == UInt8(ascii: "-")
        else { return false }
        let total = weights.withUnsafeBufferPointer { weights in uuid.reduce(0) { $0 &+ Int(weights[Int($1)]) } }
        return total == 4
    }

    /// Per byte: 0 for a hex digit in either case, 1 for a dash, 128 for anything else (so that 36 bytes
    /// of anything else cannot add up to 4).
    private static let weights: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): 0
        case UInt8(ascii: "-"): 1
        default: 128
        }
    }
}
