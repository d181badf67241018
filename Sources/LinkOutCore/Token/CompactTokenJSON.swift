/// The token's JSON as StoreKit writes it, read in one tight pass: `{"name":value,...}` with no whitespace,
/// only the known fields, each once and of its type, strings of plain ASCII (no escapes), integers of at
/// most 18 digits. Anything else (whitespace, escapes, other characters, unknown or repeated fields, other
/// types or numbers) makes it answer nil, and `TokenDecoder` reads the JSON with the general `JSONReader`,
/// which accepts and refuses exactly as it always has; on the JSON this reader accepts, both read the same
/// fields (`CompactTokenJSONTests` checks that on thousands of variants).
///
/// Why a second reader: the general one costs about 3,000 instructions for a token's 140 bytes (it handles
/// whitespace, escapes, nesting and skipping at every step); this about 1,000, on every request.
enum CompactTokenJSON {
    static func fields(_ json: UnsafeRawBufferPointer) -> TokenFields? {
        let count = json.count
        guard count >= 2, json[0] == UInt8(ascii: "{") else { return nil }
        var fields = TokenFields()
        var seen: UInt8 = 0
        var index = 1
        var next = 0
        while true {
            // "name": with one of the known names, not seen yet. StoreKit writes them in `names`' order,
            // so the name after the last one found is tried first.
            guard let position = knownKey(json, at: index, tryingFirst: next), seen & (1 << position) == 0 else { return nil }
            seen |= 1 << position
            next = position + 1 == TokenFields.names.count ? 0 : position + 1
            let field = TokenFields.names[position].field
            index += 3 + TokenFields.names[position].name.utf8CodeUnitCount
            // value
            switch field {
            case .appAppleId, .tokenCreationDate, .tokenExpirationDate:
                guard let number = integer(json, at: &index) else { return nil }
                fields.set(field, number)
            case .bundleId, .externalPurchaseId, .tokenType:
                guard index < count, json[index] == UInt8(ascii: "\"") else { return nil }
                let end = JSONReader.plainRunEnd(in: json, from: index + 1, stoppingAtNonASCII: true)
                guard end < count, json[end] == UInt8(ascii: "\"") else { return nil }
                fields.set(field, String(decoding: UnsafeRawBufferPointer(rebasing: json[(index + 1)..<end]), as: UTF8.self))
                index = end + 1
            }
            // , or the closing } as the last byte
            guard index < count else { return nil }
            if json[index] == UInt8(ascii: ",") {
                index += 1
            } else {
                return json[index] == UInt8(ascii: "}") && index + 1 == count ? fields : nil
            }
        }
    }

    /// The position in `TokenFields.names` of the name a `"name":` at `index` spells, trying `first` first
    /// and then the others in turn; nil for any other key. A name's end is known, so a quote and a colon
    /// there turn most names away before their bytes are compared.
    @inline(__always)
    private static func knownKey(_ json: UnsafeRawBufferPointer, at index: Int, tryingFirst first: Int) -> Int? {
        guard index < json.count, json[index] == UInt8(ascii: "\"") else { return nil }
        var position = first
        for _ in TokenFields.names.indices {
            let name = TokenFields.names[position].name
            let end = index + 1 + name.utf8CodeUnitCount
            if end + 1 < json.count, json[end] == UInt8(ascii: "\""), json[end + 1] == UInt8(ascii: ":"),
                UnsafeRawBufferPointer(rebasing: json[(index + 1)..<end]).equals(name)
            {
                return position
            }
            position = position + 1 == TokenFields.names.count ? 0 : position + 1
        }
        return nil
    }

    /// An integer of 1 to 18 digits (no leading zero but `0` itself), optionally negative, that ends where a
    /// member does (`,` or `}`); `index` moves past it.
    private static func integer(_ json: UnsafeRawBufferPointer, at index: inout Int) -> Int64? {
        let negative = index < json.count && json[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let digits = index
        var magnitude: Int64 = 0
        while index < json.count, json[index] &- UInt8(ascii: "0") < 10 {
            magnitude = magnitude &* 10 &+ Int64(json[index] &- UInt8(ascii: "0"))
            index += 1
        }
        let length = index - digits
        guard (1...18).contains(length), json[digits] != UInt8(ascii: "0") || length == 1,
            index < json.count, json[index] == UInt8(ascii: ",") || json[index] == UInt8(ascii: "}")
        else { return nil }
        return negative ? -magnitude : magnitude
    }
}
