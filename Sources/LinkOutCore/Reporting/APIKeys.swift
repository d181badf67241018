import Crypto

/// The checkout's API keys, as the keys file holds them: one `NAME SHA256-HEX` per line (`#` starts a
/// comment). Only the keys' SHA-256 is kept, so the file gives nobody a key; a request's bearer key is
/// hashed and compared with every entry in constant time, and the entry's name goes in the log.
///
/// A plain SHA-256 rather than a slow password hash: keys are long random strings (`linkout api-key new`
/// makes 32 random bytes), which no dictionary attack can guess, and a request must not cost a KDF.
public struct APIKeys: Sendable {
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var digest: [UInt8]
    }

    public private(set) var entries: [Entry]

    /// Parses the file's text; every line that is neither blank, a comment nor `NAME HEX64` is a problem,
    /// and so is a file with no key at all.
    public static func parse(_ text: String) -> Result<APIKeys, ConfigError> {
        var (entries, problems) = read(text)
        if entries.isEmpty, problems.isEmpty {
            problems.append(ConfigProblem(key: "", rule: "holds no key (add one with: linkout api-key new NAME)"))
        }
        return problems.isEmpty ? .success(APIKeys(entries: entries)) : .failure(ConfigError(problems: problems))
    }

    /// The file's keys and the problems of its lines, an empty file being none: what `api-key new` checks
    /// before it appends a key.
    public static func read(_ text: String) -> (entries: [Entry], problems: [ConfigProblem]) {
        var entries: [Entry] = []
        var problems: [ConfigProblem] = []
        // Split on every line end ("\n", "\r\n", "\r" and Unicode's): in Swift "\r\n" is one Character, equal
        // to neither "\n" nor "\r", so splitting on "\n" alone made a file with Windows line ends one long line.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.isEmpty { continue }
            guard fields.count == 2, let digest = hexBytes(fields[1]), digest.count == 32,
                fields[0].utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
            else {
                problems.append(
                    ConfigProblem(
                        key: "line \(index + 1)",
                        rule: "must be NAME and the key's SHA-256 in hex (64 characters), such as: checkout 9f86d0…"))
                continue
            }
            if entries.contains(where: { $0.name == String(fields[0]) }) {
                problems.append(ConfigProblem(key: "line \(index + 1)", rule: "the name \(fields[0]) is given twice"))
            }
            entries.append(Entry(name: String(fields[0]), digest: digest))
        }
        return (entries, problems)
    }

    /// The name of the key `bearer` is, or nil. Every entry is compared, whichever matches, in constant
    /// time per entry, so the answer's timing tells nothing about a near miss.
    public func name(of bearer: some Collection<UInt8>) -> String? {
        let digest = Array(SHA256.hash(data: Array(bearer)))
        var found: String?
        for entry in entries {
            var difference: UInt8 = 0
            for (a, b) in zip(digest, entry.digest) { difference |= a ^ b }
            if difference == 0, found == nil { found = entry.name }
        }
        return found
    }

    /// A new key and the line that lets it in: 32 random bytes as base64url, and `NAME SHA256-HEX`.
    public static func newKey(name: String) -> (key: String, line: String) {
        let key = TokenBase64.encodeURLSafe(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
        return (key, "\(name) \(hex(Array(SHA256.hash(data: Array(key.utf8)))))")
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexBytes(_ text: Substring) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard bytes.count % 2 == 0 else { return nil }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}
