import Foundation
import LinkOutServer
import LinkOutTestSupport
import Testing

/// GeoIPDatabase against databases written by MMDBWriter, read by libmaxminddb itself (and, where Debian's
/// mmdb-bin is installed, checked with `mmdblookup`, so the writer is not only checked by our own reader).
@Suite struct GeoIPDatabaseTests {
    /// IPv4 and IPv6 networks, one nested in another of each family.
    static func countries(recordSize: Int = 28, in folder: TemporaryFolder) throws -> String {
        let path = folder.file("country-\(recordSize).mmdb")
        try MMDBWriter.write(
            [
                ("203.0.113.0/24", "NL"),
                ("203.0.113.128/25", "DE"),
                ("2001:db8::/32", "FR"),
                ("2001:db8:1::/48", "BE"),
                ("192.0.2.1/32", "se"),
            ], to: path, recordSize: recordSize)
        return path
    }

    @Test(arguments: [24, 28, 32])
    func ipv4AddressesInAndOutOfTheNetworks(recordSize: Int) throws {
        let folder = TemporaryFolder()
        let database = try GeoIPDatabase(path: Self.countries(recordSize: recordSize, in: folder))
        #expect(database.country(forAddress: "203.0.113.0") == "nl")
        #expect(database.country(forAddress: "203.0.113.9") == "nl")
        #expect(database.country(forAddress: "203.0.113.127") == "nl")
        #expect(database.country(forAddress: "203.0.113.128") == "de", "the more specific network wins")
        #expect(database.country(forAddress: "203.0.113.255") == "de")
        #expect(database.country(forAddress: "192.0.2.1") == "se")
        #expect(database.country(forAddress: "192.0.2.2") == nil)
        #expect(database.country(forAddress: "203.0.112.255") == nil)
        #expect(database.country(forAddress: "203.0.114.0") == nil)
        #expect(database.country(forAddress: "198.51.100.7") == nil)
        #expect(database.country(forAddress: "127.0.0.1") == nil)
        #expect(database.country(forAddress: "0.0.0.0") == nil)
        #expect(database.country(forAddress: "255.255.255.255") == nil)
    }

    @Test(arguments: [24, 28, 32])
    func ipv6AddressesInAndOutOfTheNetworks(recordSize: Int) throws {
        let folder = TemporaryFolder()
        let database = try GeoIPDatabase(path: Self.countries(recordSize: recordSize, in: folder))
        #expect(database.country(forAddress: "2001:db8::") == "fr")
        #expect(database.country(forAddress: "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff") == "fr")
        #expect(database.country(forAddress: "2001:db8:1::") == "be")
        #expect(database.country(forAddress: "2001:db8:1:2::3") == "be")
        #expect(database.country(forAddress: "2001:db8:2::1") == "fr")
        #expect(database.country(forAddress: "2001:db9::1") == nil)
        #expect(database.country(forAddress: "2001:db7:ffff::1") == nil)
        #expect(database.country(forAddress: "::1") == nil)
        #expect(database.country(forAddress: "::") == nil)
        #expect(database.country(forAddress: "fe80::1") == nil)
    }

    /// What a dual-stack listener reports for an IPv4 peer; the test database has no ::ffff:0:0/96 alias,
    /// so this is GeoIPDatabase's own mapping.
    @Test func ipv4MappedIPv6AddressesAreLookedUpAsIPv4() throws {
        let folder = TemporaryFolder()
        let database = try GeoIPDatabase(path: Self.countries(in: folder))
        #expect(database.country(forAddress: "::ffff:203.0.113.9") == "nl")
        #expect(database.country(forAddress: "::FFFF:203.0.113.200") == "de")
        #expect(database.country(forAddress: "::ffff:cb00:7109") == "nl")
        #expect(database.country(forAddress: "::ffff:198.51.100.7") == nil)
        // IPv4 under ::/96 the way the tree stores it is an IPv6 address like any other.
        #expect(database.country(forAddress: "::cb00:7109") == "nl")
    }

    @Test func textThatIsNotANumericAddressHasNoCountry() throws {
        let folder = TemporaryFolder()
        let database = try GeoIPDatabase(path: Self.countries(in: folder))
        for text in [
            "", "nl", "localhost", "203.0.113", "203.0.113.9:80", "203.0.113.9/24", " 203.0.113.9",
            "203.0.113.256", "[2001:db8::1]", "2001:db8::1%eth0", "2001:db8:::1", "203.0.113.9\u{0}x",
        ] {
            #expect(database.country(forAddress: text) == nil, "\(text.debugDescription)")
        }
    }

    @Test func isoCodesAreLowercased() throws {
        let folder = TemporaryFolder()
        let path = folder.file("case.mmdb")
        try MMDBWriter.write([("10.0.0.0/8", "NL"), ("10.1.0.0/16", "se"), ("10.2.0.0/16", "Fr")], to: path)
        let database = try GeoIPDatabase(path: path)
        #expect(database.country(forAddress: "10.9.9.9") == "nl")
        #expect(database.country(forAddress: "10.1.2.3") == "se")
        #expect(database.country(forAddress: "10.2.2.3") == "fr")
    }

    @Test func recordsWithoutAUsableCountry() throws {
        let folder = TemporaryFolder()
        let path = folder.file("records.mmdb")
        var writer = MMDBWriter()
        try writer.insert("10.0.0.0/24", data: ["continent": ["code": "EU"]])
        try writer.insert("10.0.1.0/24", data: ["registered_country": ["iso_code": "BE"]])
        try writer.insert("10.0.2.0/24", data: ["country": ["iso_code": "DE"], "registered_country": ["iso_code": "BE"]])
        try writer.insert("10.0.3.0/24", data: ["country": ["names": ["en": "Netherlands"]]])
        try writer.insert("10.0.4.0/24", data: ["country": ["iso_code": "NLD"]])
        try writer.insert("10.0.5.0/24", data: ["country": ["iso_code": "N1"]])
        try writer.insert("10.0.6.0/24", data: ["country": ["iso_code": .uint32(31)]])
        try writer.insert("10.0.7.0/24", data: ["country": "NL"])
        try writer.insert("10.0.8.0/24", data: ["country": ["iso_code": ""]])
        try writer.insert("10.0.9.0/24", data: ["country": ["iso_code": "É"]])
        try writer.insert("10.0.10.0/24", data: ["country": ["iso_code": "XX1"], "registered_country": ["iso_code": "AT"]])
        try writer.insert("10.0.11.0/24", data: .string("NL"))
        try writer.insert("10.0.12.0/24", data: [:])
        try writer.write(to: path)
        let database = try GeoIPDatabase(path: path)
        #expect(database.country(forAddress: "10.0.0.1") == nil, "a record without country")
        #expect(database.country(forAddress: "10.0.1.1") == "be", "registered_country when there is no country")
        #expect(database.country(forAddress: "10.0.2.1") == "de", "country before registered_country")
        #expect(database.country(forAddress: "10.0.3.1") == nil, "country without iso_code")
        #expect(database.country(forAddress: "10.0.4.1") == nil, "three letters")
        #expect(database.country(forAddress: "10.0.5.1") == nil, "not letters")
        #expect(database.country(forAddress: "10.0.6.1") == nil, "not a string")
        #expect(database.country(forAddress: "10.0.7.1") == nil, "country is not a map")
        #expect(database.country(forAddress: "10.0.8.1") == nil, "empty code")
        #expect(database.country(forAddress: "10.0.9.1") == nil, "two UTF-8 bytes, not two ASCII letters")
        #expect(database.country(forAddress: "10.0.10.1") == "at", "an unusable country falls back")
        #expect(database.country(forAddress: "10.0.11.1") == nil, "the record is not a map")
        #expect(database.country(forAddress: "10.0.12.1") == nil, "an empty map")
    }

    @Test func anIPv4OnlyDatabase() throws {
        let folder = TemporaryFolder()
        let path = folder.file("ipv4.mmdb")
        try MMDBWriter.write([("203.0.113.0/24", "NL")], to: path, recordSize: 24, ipVersion: 4)
        let database = try GeoIPDatabase(path: path)
        #expect(database.country(forAddress: "203.0.113.9") == "nl")
        #expect(database.country(forAddress: "::ffff:203.0.113.9") == "nl")
        #expect(database.country(forAddress: "198.51.100.7") == nil)
        #expect(database.country(forAddress: "2001:db8::1") == nil, "IPv6 in an IPv4 database is no country, not a crash")
        #expect(throws: MMDBWriter.WriterError.self) {
            var writer = MMDBWriter(ipVersion: 4)
            try writer.insert("2001:db8::/32", isoCode: "FR")
        }
    }

    @Test func anEmptyDatabaseAndADefaultRoute() throws {
        let folder = TemporaryFolder()
        let empty = folder.file("empty.mmdb")
        try MMDBWriter.write([], to: empty)
        let nothing = try GeoIPDatabase(path: empty)
        #expect(nothing.country(forAddress: "203.0.113.9") == nil)
        #expect(nothing.country(forAddress: "2001:db8::1") == nil)

        let everything = folder.file("everything.mmdb")
        try MMDBWriter.write([("::/0", "EU"), ("0.0.0.0/0", "NL"), ("203.0.113.0/24", "DE")], to: everything)
        let database = try GeoIPDatabase(path: everything)
        #expect(database.country(forAddress: "2001:db8::1") == "eu")
        #expect(database.country(forAddress: "198.51.100.7") == "nl")
        #expect(database.country(forAddress: "203.0.113.9") == "de")
    }

    /// Enough networks and distinct records that tree and data offsets need all the bytes of a record.
    @Test(arguments: [24, 28, 32])
    func manyNetworks(recordSize: Int) throws {
        let folder = TemporaryFolder()
        let path = folder.file("many.mmdb")
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        func code(_ index: Int) -> String { String([letters[index / 26 % 26], letters[index % 26]]) }
        var writer = MMDBWriter(recordSize: recordSize)
        var expectations: [(address: String, code: String)] = []
        for index in 0..<600 {
            // Distinct networks: (second, third octet) differs for every index.
            let first = 1 + index * 37 % 223, second = index / 256, third = index % 256
            try writer.insert(
                "\(first).\(second).\(third).0/24",
                data: ["country": ["iso_code": .string(code(index))], "index": .uint32(UInt32(index))])
            expectations.append(("\(first).\(second).\(third).\(index * 7 % 256)", code(index)))
            let hex = String(index, radix: 16)
            try writer.insert("2001:db8:\(hex)::/48", isoCode: code(index + 1))
            expectations.append(("2001:db8:\(hex):\(hex)::\(hex)", code(index + 1)))
        }
        try writer.write(to: path)
        let database = try GeoIPDatabase(path: path)
        for (address, code) in expectations {
            #expect(database.country(forAddress: address) == code.lowercased(), "\(address)")
        }
        #expect(database.country(forAddress: "2001:db8:ffff::1") == nil)
        #expect(database.country(forAddress: "224.0.0.1") == nil)
    }

    @Test func aMissingFileIsAClearError() throws {
        let folder = TemporaryFolder()
        let path = folder.file("GeoLite2-Country.mmdb")
        let error = try #require(throws: GeoIPDatabase.OpenError.self) { try GeoIPDatabase(path: path) }
        #expect(error.path == path)
        #expect(error.description.contains(path))
        #expect(error.description.contains("No such file or directory"), "\(error)")
        #expect(error.description.hasPrefix("cannot open MaxMind database "), "\(error)")
    }

    @Test(arguments: ["garbage", "empty", "truncated", "directory"])
    func aFileThatIsNotAMaxMindDatabaseIsAClearError(kind: String) throws {
        let folder = TemporaryFolder()
        let path = folder.file("broken.mmdb")
        switch kind {
        case "garbage":
            folder.write("broken.mmdb", String(repeating: "this is not a MaxMind database\n", count: 100))
        case "empty":
            folder.write("broken.mmdb", "")
        case "truncated":
            // The metadata without its last bytes.
            let good = try Data(contentsOf: URL(fileURLWithPath: Self.countries(in: folder)))
            try good.prefix(good.count - 5).write(to: URL(fileURLWithPath: path))
        default:
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        let error = try #require(throws: GeoIPDatabase.OpenError.self) { try GeoIPDatabase(path: path) }
        #expect(error.description.hasPrefix("cannot open MaxMind database \(path): "), "\(error)")
        #expect(error.reason.count > 10, "\(error)")
    }

    /// The gateway shares one database between its event loops.
    @Test func concurrentLookups() async throws {
        let folder = TemporaryFolder()
        let database = try GeoIPDatabase(path: Self.countries(in: folder))
        await withTaskGroup(of: Bool.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var right = true
                    for round in 0..<2_000 {
                        let ipv4 = database.country(forAddress: "203.0.113.\((task + round) % 128)") == "nl"
                        let ipv6 = database.country(forAddress: "2001:db8:1::\(round)") == "be"
                        let none = database.country(forAddress: "198.51.100.\(round % 256)") == nil
                        right = right && ipv4 && ipv6 && none
                    }
                    return right
                }
            }
            for await right in group { #expect(right) }
        }
    }

    // MARK: - The writer, checked by MaxMind's own command-line reader

    static let mmdblookup = ["/usr/bin/mmdblookup", "/usr/local/bin/mmdblookup"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: mmdblookup != nil, "mmdblookup (Debian's mmdb-bin) is not installed"), arguments: [24, 28, 32])
    func mmdblookupReadsTheWrittenDatabase(recordSize: Int) throws {
        let folder = TemporaryFolder()
        let path = try Self.countries(recordSize: recordSize, in: folder)
        func lookup(_ arguments: [String]) throws -> (status: Int32, output: String) {
            let result = try Command.run(Self.mmdblookup!, ["--file", path] + arguments)
            return (result.status, result.stdoutText + result.stderr)
        }
        let nl = try lookup(["--ip", "203.0.113.9", "country", "iso_code"])
        #expect(nl.status == 0 && nl.output.contains("\"NL\" <utf8_string>"), "\(nl.output)")
        let be = try lookup(["--ip", "2001:db8:1::7", "country", "iso_code"])
        #expect(be.status == 0 && be.output.contains("\"BE\" <utf8_string>"), "\(be.output)")
        let none = try lookup(["--ip", "198.51.100.7"])
        #expect(none.output.contains("Could not find an entry for this IP address"), "\(none.output)")

        let verbose = try lookup(["--verbose", "--ip", "203.0.113.200"])
        #expect(verbose.status == 0, "\(verbose.output)")
        // mmdblookup lines its values up with spaces.
        let metadata = verbose.output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for line in [
            "Node count: ", "Record size: \(recordSize) bits", "IP version: IPv6", "Binary format: 2.0",
            "Type: Test-Country", "Languages: en", "en: linkout test country database", "\"DE\" <utf8_string>",
        ] {
            #expect(metadata.contains(line), "\(line) in \(verbose.output)")
        }
    }
}
