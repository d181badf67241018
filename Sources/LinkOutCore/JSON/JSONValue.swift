/// A parsed JSON document, keeping object members in order (and duplicates visible) so the config loader
/// can name every problem precisely.
public indirect enum JSONValue: Sendable, Equatable {
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONValue

        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    case object([Member])
    case array([JSONValue])
    case string(String)
    /// A number written without fraction or exponent that fits in 64 bits.
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case null

    /// Parses a whole document; trailing bytes other than whitespace are an error. With `allowingComments`,
    /// `//` starts a comment that runs to the end of the line (outside strings).
    public static func parse(_ bytes: [UInt8], allowingComments: Bool = false) throws -> JSONValue {
        let parsed = bytes.withUnsafeBytes { bytes in
            Result { () throws(JSONReader.Failure) -> JSONValue in
                var reader = JSONReader(bytes, maxDepth: 64, allowsComments: allowingComments)
                let value = try reader.readValue()
                reader.skipWhitespace()
                guard reader.atEnd else { throw reader.fail("unexpected data after the document") }
                return value
            }
        }
        switch parsed {
        case .success(let value): return value
        case .failure(let error): throw JSONParseError(message: error.message, line: Self.line(of: error.offset, in: bytes))
        }
    }

    private static func line(of offset: Int, in bytes: [UInt8]) -> Int {
        1 + bytes[..<min(offset, bytes.count)].lazy.filter { $0 == 0x0A }.count
    }

    /// What a config problem calls this kind of value.
    public var kindName: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .integer, .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }
}

/// A document that is not JSON, with the line where reading stopped.
public struct JSONParseError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var description: String { "invalid JSON at line \(line): \(message)" }
}
