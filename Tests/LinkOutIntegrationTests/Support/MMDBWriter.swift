import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a MaxMind DB file (format 2.0, https://maxmind.github.io/MaxMind-DB/) for tests: a country
/// database like GeoLite2-Country, from networks and ISO codes, with no MaxMind tooling.
///
///     var writer = MMDBWriter()                                  // IPv6 tree, 28-bit records
///     try writer.insert("203.0.113.0/24", isoCode: "NL")         // {"country": {"iso_code": "NL"}}
///     try writer.insert("2001:db8::/32", isoCode: "FR")
///     try writer.insert("198.51.100.0/24", data: ["registered_country": ["iso_code": "BE"]])
///     try writer.write(to: folder.file("country.mmdb"))
///
/// or in one call: `try MMDBWriter.write([("203.0.113.0/24", "NL")], to: path)`.
///
/// As in MaxMind's IPv6 databases, IPv4 networks live under `::/96` (`203.0.113.0/24` is `::cb00:7100/120`),
/// which is where libmaxminddb looks IPv4 addresses up. Unlike them, `::ffff:0:0/96` and `2002::/16` are not
/// aliased to that subtree: an IPv4-mapped address finds a country only if the reader maps it itself.
/// A more specific network wins over a less specific one whatever the order of insertion; for the same
/// network, the last insertion wins.
struct MMDBWriter {
    /// A value of the data section. Literals build maps, arrays and strings:
    /// `["country": ["iso_code": "NL", "names": ["en": "Netherlands"]]]`.
    indirect enum Value: ExpressibleByStringLiteral, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
        case string(String)
        case double(Double)
        case uint16(UInt16)
        case uint32(UInt32)
        case uint64(UInt64)
        case boolean(Bool)
        /// Keys in the order given.
        case map([(key: String, value: Value)])
        case array([Value])

        init(stringLiteral value: String) { self = .string(value) }
        init(dictionaryLiteral elements: (String, Value)...) { self = .map(elements.map { (key: $0.0, value: $0.1) }) }
        init(arrayLiteral elements: Value...) { self = .array(elements) }

        /// What GeoLite2-Country holds for a country, reduced to the code: `{"country": {"iso_code": code}}`.
        static func country(_ isoCode: String) -> Value { ["country": ["iso_code": .string(isoCode)]] }
    }

    struct WriterError: Error, CustomStringConvertible {
        var description: String
    }

    /// Bits per search-tree record: 24, 28 or 32.
    var recordSize: Int
    /// 6: one tree for both families, IPv4 under `::/96`. 4: an IPv4-only tree (IPv6 networks are refused).
    var ipVersion: Int
    var databaseType = "Test-Country"
    var languages = ["en"]
    var description: [(language: String, text: String)] = [("en", "linkout test country database, written by MMDBWriter")]
    var buildEpoch = UInt64(Date().timeIntervalSince1970)

    private var entries: [(bits: [UInt8], prefixLength: Int, data: Value)] = []

    init(recordSize: Int = 28, ipVersion: Int = 6) {
        self.recordSize = recordSize
        self.ipVersion = ipVersion
    }

    /// One database from `(CIDR network, ISO code)` pairs, written to `path`.
    static func write(
        _ networks: [(network: String, isoCode: String)], to path: String,
        recordSize: Int = 28, ipVersion: Int = 6
    ) throws {
        var writer = MMDBWriter(recordSize: recordSize, ipVersion: ipVersion)
        for (network, isoCode) in networks { try writer.insert(network, isoCode: isoCode) }
        try writer.write(to: path)
    }

    /// `network` ("203.0.113.0/24", "2001:db8::/32") maps to `{"country": {"iso_code": isoCode}}`.
    mutating func insert(_ network: String, isoCode: String) throws {
        try insert(network, data: .country(isoCode))
    }

    /// `network` ("203.0.113.0/24", "2001:db8::/32") maps to `data`. Host bits past the prefix are ignored.
    mutating func insert(_ network: String, data: Value) throws {
        let (bits, prefixLength) = try parse(network)
        entries.append((bits, prefixLength, data))
    }

    func write(to path: String) throws {
        try Data(bytes()).write(to: URL(fileURLWithPath: path))
    }

    /// The whole file: search tree, 16 zero bytes, data section, metadata marker, metadata.
    func bytes() throws -> [UInt8] {
        guard [24, 28, 32].contains(recordSize) else { throw WriterError(description: "record size \(recordSize): must be 24, 28 or 32") }

        // The data section, each distinct value once.
        var dataSection: [UInt8] = []
        var offsetOfEncoding: [[UInt8]: Int] = [:]
        var dataOffsets: [Int] = []
        for entry in entries {
            var encoded: [UInt8] = []
            Self.encode(entry.data, into: &encoded)
            if let offset = offsetOfEncoding[encoded] {
                dataOffsets.append(offset)
            } else {
                offsetOfEncoding[encoded] = dataSection.count
                dataOffsets.append(dataSection.count)
                dataSection += encoded
            }
        }

        // The tree, less specific networks first so more specific ones split their records.
        var tree = Tree()
        let order = entries.indices.sorted { (entries[$0].prefixLength, $0) < (entries[$1].prefixLength, $1) }
        for index in order {
            tree.insert(bits: entries[index].bits, prefixLength: entries[index].prefixLength, data: dataOffsets[index])
        }

        let nodeCount = tree.nodes.count
        let limit = UInt64(1) << UInt64(recordSize)
        func recordValue(_ record: Tree.Record) throws -> UInt32 {
            let value: Int
            switch record {
            case .empty: value = nodeCount
            case .node(let node): value = node
            case .data(let offset): value = nodeCount + 16 + offset
            }
            guard UInt64(value) < limit else {
                throw WriterError(description: "record value \(value) does not fit in \(recordSize) bits")
            }
            return UInt32(value)
        }

        var file: [UInt8] = []
        file.reserveCapacity(nodeCount * recordSize / 4 + 16 + dataSection.count + 512)
        for node in tree.nodes {
            let left = try recordValue(node.left)
            let right = try recordValue(node.right)
            switch recordSize {
            case 24:
                Self.appendBigEndian(left, bytes: 3, to: &file)
                Self.appendBigEndian(right, bytes: 3, to: &file)
            case 28:
                // The middle byte's high nibble is the left record's top 4 bits, its low nibble the right's.
                Self.appendBigEndian(left & 0xFF_FFFF, bytes: 3, to: &file)
                file.append(UInt8((left >> 24) << 4 | (right >> 24)))
                Self.appendBigEndian(right & 0xFF_FFFF, bytes: 3, to: &file)
            default:
                Self.appendBigEndian(left, bytes: 4, to: &file)
                Self.appendBigEndian(right, bytes: 4, to: &file)
            }
        }
        file += [UInt8](repeating: 0, count: 16)
        file += dataSection
        file += [0xAB, 0xCD, 0xEF] + Array("MaxMind.com".utf8)
        let metadata: Value = .map([
            ("binary_format_major_version", .uint16(2)),
            ("binary_format_minor_version", .uint16(0)),
            ("build_epoch", .uint64(buildEpoch)),
            ("database_type", .string(databaseType)),
            ("description", .map(description.map { ($0.language, .string($0.text)) })),
            ("ip_version", .uint16(UInt16(ipVersion))),
            ("languages", .array(languages.map { .string($0) })),
            ("node_count", .uint32(UInt32(nodeCount))),
            ("record_size", .uint16(UInt16(recordSize))),
        ])
        Self.encode(metadata, into: &file)
        return file
    }

    // MARK: - Search tree

    /// A binary trie over address bits; node 0 is the root, children are numbered as they are made.
    private struct Tree {
        enum Record {
            case empty
            case node(Int)
            case data(Int)
        }
        struct Node { var left: Record = .empty, right: Record = .empty }
        var nodes = [Node()]

        mutating func insert(bits: [UInt8], prefixLength: Int, data: Int) {
            guard prefixLength > 0 else {
                nodes[0] = Node(left: .data(data), right: .data(data))
                return
            }
            var node = 0
            for depth in 0..<prefixLength {
                let right = bits[depth / 8] & (0x80 >> UInt8(depth % 8)) != 0
                let record = right ? nodes[node].right : nodes[node].left
                if depth == prefixLength - 1 {
                    set(.data(data), node: node, right: right)
                    return
                }
                switch record {
                case .node(let child):
                    node = child
                case .empty, .data:
                    // A less specific network's data (or nothing) is pushed down to both halves.
                    nodes.append(Node(left: record, right: record))
                    set(.node(nodes.count - 1), node: node, right: right)
                    node = nodes.count - 1
                }
            }
        }

        private mutating func set(_ record: Record, node: Int, right: Bool) {
            if right { nodes[node].right = record } else { nodes[node].left = record }
        }
    }

    /// The network's bits as the tree walks them (16 bytes in an IPv6 tree, 4 in an IPv4 one) and its prefix
    /// length in that tree.
    private func parse(_ network: String) throws -> ([UInt8], Int) {
        let parts = network.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let length = Int(parts[1]) else {
            throw WriterError(description: "\(network): not ADDRESS/PREFIX")
        }
        let address = String(parts[0])
        var ipv4 = in_addr()
        if inet_pton(AF_INET, address, &ipv4) == 1 {
            guard (0...32).contains(length) else { throw WriterError(description: "\(network): IPv4 prefix must be 0 to 32") }
            let bytes = withUnsafeBytes(of: ipv4) { Array($0) }
            return ipVersion == 4 ? (bytes, length) : ([UInt8](repeating: 0, count: 12) + bytes, 96 + length)
        }
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET6, address, &ipv6) == 1 else { throw WriterError(description: "\(network): not an IP address") }
        guard ipVersion == 6 else { throw WriterError(description: "\(network): IPv6 network in an IPv4 database") }
        guard (0...128).contains(length) else { throw WriterError(description: "\(network): IPv6 prefix must be 0 to 128") }
        return (withUnsafeBytes(of: ipv6) { Array($0) }, length)
    }

    // MARK: - Data section encoding

    private static func encode(_ value: Value, into out: inout [UInt8]) {
        switch value {
        case .string(let text):
            let bytes = Array(text.utf8)
            appendControl(type: 2, size: bytes.count, to: &out)
            out += bytes
        case .double(let number):
            appendControl(type: 3, size: 8, to: &out)
            appendBigEndian(number.bitPattern, bytes: 8, to: &out)
        case .uint16(let number):
            appendUnsigned(UInt64(number), type: 5, to: &out)
        case .uint32(let number):
            appendUnsigned(UInt64(number), type: 6, to: &out)
        case .uint64(let number):
            appendUnsigned(number, type: 9, to: &out)
        case .boolean(let flag):
            appendControl(type: 14, size: flag ? 1 : 0, to: &out)
        case .map(let pairs):
            appendControl(type: 7, size: pairs.count, to: &out)
            for (key, item) in pairs {
                encode(.string(key), into: &out)
                encode(item, into: &out)
            }
        case .array(let items):
            appendControl(type: 11, size: items.count, to: &out)
            for item in items { encode(item, into: &out) }
        }
    }

    /// Unsigned integers take as few bytes as their value needs (0 for zero).
    private static func appendUnsigned(_ number: UInt64, type: Int, to out: inout [UInt8]) {
        let size = (64 - number.leadingZeroBitCount + 7) / 8
        appendControl(type: type, size: size, to: &out)
        appendBigEndian(number, bytes: size, to: &out)
    }

    /// The control byte (type in the top 3 bits, 0 and an extra byte of `type - 7` for extended types) and
    /// the size, with its 1 to 3 extra bytes past 28.
    private static func appendControl(type: Int, size: Int, to out: inout [UInt8]) {
        precondition(size < 65_821 + (1 << 24), "value too large for the MaxMind DB format")
        let sizeField: Int
        var sizeBytes: [UInt8] = []
        switch size {
        case ..<29:
            sizeField = size
        case ..<285:
            sizeField = 29
            appendBigEndian(UInt64(size - 29), bytes: 1, to: &sizeBytes)
        case ..<65_821:
            sizeField = 30
            appendBigEndian(UInt64(size - 285), bytes: 2, to: &sizeBytes)
        default:
            sizeField = 31
            appendBigEndian(UInt64(size - 65_821), bytes: 3, to: &sizeBytes)
        }
        if type <= 7 {
            out.append(UInt8(type << 5 | sizeField))
        } else {
            out.append(UInt8(sizeField))
            out.append(UInt8(type - 7))
        }
        out += sizeBytes
    }

    private static func appendBigEndian<Number: FixedWidthInteger>(_ number: Number, bytes: Int, to out: inout [UInt8]) {
        for index in stride(from: bytes - 1, through: 0, by: -1) {
            out.append(UInt8(truncatingIfNeeded: number >> (index * 8)))
        }
    }
}
