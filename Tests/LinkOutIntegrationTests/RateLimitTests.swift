import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// The per-client rate limit on link-out requests, with and without a trusted proxy in front.
@Suite struct RateLimitTests {
    static func config(extra: String) -> String {
        TestConfig.json(
            links: #"[{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/" }] }]"#,
            extra: extra)
    }

    @Test func aClientOverItsRateGets429AndHealthChecksAreNotCounted() throws {
        let folder = TemporaryFolder()
        let config = folder.write("config.json", Self.config(extra: #""rateLimit": { "requestsPerSecond": 1, "burst": 4 },"#))
        // One loop: the whole budget in one place, so the count is exact.
        let server = try GatewayProcess(config: config, store: folder.file("store.sqlite"), threads: 1)
        let connection = try HTTPConnection(port: server.port)
        var statuses: [Int] = []
        for _ in 0..<10 {
            statuses.append(try connection.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status)
        }
        #expect(statuses.filter { $0 == 302 }.count == 4, "\(statuses)")
        #expect(statuses.filter { $0 == 429 }.count == 6, "\(statuses)")
        let limited = try connection.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()))
        #expect(limited.status == 429)
        #expect(limited[header: "Retry-After"] == "1")
        #expect(limited[header: "X-Linkout-Reason"] == "rate_limited")
        #expect(
            limited.body
                == (try ShopperPages.catalog().page(.tooManyRequests, language: ShopperLanguage.choose(acceptLanguage: nil, country: "nl")))
        )
        #expect(try connection.request("GET", "/healthz").status == 200, "health checks are never limited")
        #expect(try exportTokens(store: server.storePath).count == 4, "a limited visit is not recorded")
        let logged = server.accessLog(atLeast: 11).filter { $0["status"] as? Int == 429 }
        #expect(logged.count == 7)
    }

    @Test func forwardedForCountsOnlyFromTrustedProxies() throws {
        let folder = TemporaryFolder()
        // The test client (127.0.0.1) is the load balancer: each forwarded client has its own budget.
        let trusted = folder.write(
            "trusted.json",
            Self.config(extra: #""rateLimit": { "requestsPerSecond": 1, "burst": 2 }, "proxies": { "trusted": ["127.0.0.1/32"] },"#))
        let server = try GatewayProcess(config: trusted, store: folder.file("trusted.sqlite"), threads: 1)
        let connection = try HTTPConnection(port: server.port)
        for client in 1...5 {
            for _ in 0..<2 {
                let response = try connection.request(
                    "GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()),
                    headers: ["X-Forwarded-For: 198.51.100.\(client)"])
                #expect(response.status == 302, "client \(client)")
            }
        }
        let third = try connection.request(
            "GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()), headers: ["X-Forwarded-For: 198.51.100.1"])
        #expect(third.status == 429)
        let lines = server.accessLog(atLeast: 11)
        #expect(lines.contains { $0["client"] as? String == "198.51.100.0" }, "the access log shows the forwarded client, truncated")

        // Without the trust, the same header changes nothing: every request is the peer's.
        let untrusted = folder.write("untrusted.json", Self.config(extra: #""rateLimit": { "requestsPerSecond": 1, "burst": 2 },"#))
        let plain = try GatewayProcess(config: untrusted, store: folder.file("untrusted.sqlite"), threads: 1)
        let other = try HTTPConnection(port: plain.port)
        var statuses: [Int] = []
        for client in 1...4 {
            statuses.append(
                try other.request(
                    "GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()),
                    headers: ["X-Forwarded-For: 198.51.100.\(client)"]
                ).status)
        }
        #expect(statuses == [302, 302, 429, 429])
    }
}
