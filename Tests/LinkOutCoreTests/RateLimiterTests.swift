import Testing

@testable import LinkOutCore

@Suite("rate limiter and trusted proxies")
struct RateLimiterTests {
    @Test func burstThenRate() {
        var limiter = RateLimiter(policy: RateLimiter.Policy(ratePerSecond: 10, burst: 5), slots: 1024)
        let client = Array("203.0.113.7".utf8)
        let allowed = (0..<20).filter { _ in limiter.allow(client: client, atMs: 1_000) }.count
        #expect(allowed == 5, "a full burst, then nothing at the same instant")
        // 10 per second refills one token every 100 ms.
        let refilled = limiter.allow(client: client, atMs: 1_100)
        let again = limiter.allow(client: client, atMs: 1_100)
        #expect(refilled)
        #expect(!again)
        // Refill caps at the burst.
        let later = (0..<20).filter { _ in limiter.allow(client: client, atMs: 100_000) }.count
        #expect(later == 5)
    }

    @Test func clientsAreSeparate() {
        var limiter = RateLimiter(policy: RateLimiter.Policy(ratePerSecond: 1, burst: 1), slots: 1024)
        let first = limiter.allow(client: Array("198.51.100.1".utf8), atMs: 0)
        let second = limiter.allow(client: Array("198.51.100.1".utf8), atMs: 0)
        let other = limiter.allow(client: Array("198.51.100.2".utf8), atMs: 0)
        #expect(first && !second && other)
    }

    @Test func memoryIsBoundedUnderAFloodOfAddresses() {
        // 100,000 distinct clients through 16 slots: no growth, and each newcomer gets a fresh burst.
        var limiter = RateLimiter(policy: RateLimiter.Policy(ratePerSecond: 1, burst: 1), slots: 16)
        for index in 0..<100_000 {
            _ = limiter.allow(client: Array("10.\(index >> 16).\(index >> 8 & 255).\(index & 255)".utf8), atMs: 0)
        }
        let newcomer = limiter.allow(client: Array("192.0.2.1".utf8), atMs: 0)
        #expect(newcomer)
    }

    @Test func forwardedForIsTrustedOnlyFromTrustedPeers() throws {
        let proxies = try #require(TrustedProxies(ranges: ["10.0.0.0/8", "fd00::/8"]))
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "203.0.113.9") == "203.0.113.9")
        // The rightmost untrusted hop: the client may have written anything before it.
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "1.1.1.1, 203.0.113.9, 10.9.9.9") == "203.0.113.9")
        #expect(proxies.client(peer: "198.51.100.4", forwardedFor: "203.0.113.9") == nil, "not from a trusted peer")
        #expect(proxies.client(peer: "fd00::1", forwardedFor: "2001:db8::7") == "2001:db8::7")
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "not-an-address") == nil)
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "10.0.0.1, 10.0.0.2") == nil, "only proxies: the peer is the client")
        #expect(TrustedProxies(ranges: ["10.0.0.0/33"]) == nil)
        #expect(TrustedProxies(ranges: ["nonsense"]) == nil)
    }

    @Test func forwardedHeader() {
        #expect(
            TrustedProxies.forwardedFor(fromForwarded: #"for=192.0.2.43, for="[2001:db8:cafe::17]:4711";proto=https"#)
                == "192.0.2.43,2001:db8:cafe::17")
        #expect(TrustedProxies.forwardedFor(fromForwarded: "proto=https;for=198.51.100.17:1234;by=10.0.0.1") == "198.51.100.17")
    }

    @Test func config() throws {
        let json = ConfigLoaderTests.config(
            extra: #""rateLimit":{"requestsPerSecond":5,"burst":10},"proxies":{"trusted":["10.0.0.0/8"],"header":"Forwarded"}"#)
        let loaded = try ConfigLoader.load(json: Array(json.utf8), baseDirectory: "/").get()
        #expect(loaded.rateLimit == RateLimiter.Policy(ratePerSecond: 5, burst: 10))
        #expect(loaded.proxies.trusted.ranges == ["10.0.0.0/8"])
        #expect(loaded.proxies.header == .forwarded)
        let none = try ConfigLoader.load(json: Array(ConfigLoaderTests.config().utf8), baseDirectory: "/").get()
        #expect(none.rateLimit == nil)
        guard
            case .failure(let error) = ConfigLoader.load(
                json: Array(ConfigLoaderTests.config(extra: #""rateLimit":{"requestsPerSecond":0},"proxies":{"trusted":["x"]}"#).utf8),
                baseDirectory: "/")
        else {
            Issue.record("accepted a zero rate and a bad range")
            return
        }
        #expect(error.problems.contains { $0.key == "rateLimit.requestsPerSecond" })
        #expect(error.problems.contains { $0.key == "proxies.trusted[0]" })
    }
}
