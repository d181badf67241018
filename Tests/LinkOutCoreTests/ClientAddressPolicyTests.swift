import Testing

@testable import LinkOutCore

@Suite("client address truncation")
struct ClientAddressPolicyTests {
    @Test(arguments: [
        ("203.0.113.77", 24, "203.0.113.0"),
        ("203.0.113.77", 16, "203.0.0.0"),
        ("203.0.113.77", 32, "203.0.113.77"),
        ("203.0.113.77", 0, "0.0.0.0"),
        ("203.0.113.77", 20, "203.0.112.0"),
    ])
    func ipv4(address: String, bits: Int, expected: String) {
        #expect(ClientAddressPolicy(ipv4PrefixBits: bits, ipv6PrefixBits: 48).truncate(address) == expected)
    }

    @Test(arguments: [
        ("2001:db8:85a3:8d3:1319:8a2e:370:7348", 48, "2001:db8:85a3::"),
        ("2001:db8:85a3:8d3:1319:8a2e:370:7348", 56, "2001:db8:85a3:800::"),
        ("2001:db8:85a3:8d3:1319:8a2e:370:7348", 128, "2001:db8:85a3:8d3:1319:8a2e:370:7348"),
        ("::1", 48, "::"),
        ("::1", 128, "::1"),
        ("::ffff:203.0.113.77", 128, "::ffff:cb00:714d"),
        ("fe80::1:0:0:2", 128, "fe80::1:0:0:2"),
        ("2001:0:0:1:0:0:0:1", 128, "2001:0:0:1::1"),
    ])
    func ipv6(address: String, bits: Int, expected: String) {
        #expect(ClientAddressPolicy(ipv4PrefixBits: 24, ipv6PrefixBits: bits).truncate(address) == expected)
    }

    @Test(arguments: ["", "localhost", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1::2::3", "12345::", "1.2.3.4 ", "-1.2.3.4"])
    func notAnAddress(_ text: String) {
        #expect(ClientAddressPolicy.defaults.truncate(text) == "-")
    }

    @Test func accessLogConfig() throws {
        let json = ConfigLoaderTests.config(
            extra: #""accessLog":{"destination":"logs/access.log","ipv4PrefixBits":16,"ipv6PrefixBits":32}"#)
        let config = try ConfigLoader.load(json: Array(json.utf8), baseDirectory: "/etc/linkout").get()
        #expect(config.accessLog.destination == .file("/etc/linkout/logs/access.log"))
        #expect(config.accessLog.clients == ClientAddressPolicy(ipv4PrefixBits: 16, ipv6PrefixBits: 32))
        let off = try ConfigLoader.load(
            json: Array(ConfigLoaderTests.config(extra: #""accessLog":{"destination":"off"}"#).utf8), baseDirectory: "/"
        ).get()
        #expect(off.accessLog.destination == .off)
        guard
            case .failure(let error) = ConfigLoader.load(
                json: Array(ConfigLoaderTests.config(extra: #""accessLog":{"ipv4PrefixBits":33}"#).utf8), baseDirectory: "/")
        else {
            Issue.record("accepted a 33-bit IPv4 prefix")
            return
        }
        #expect(error.problems.contains { $0.key == "accessLog.ipv4PrefixBits" })
    }
}
