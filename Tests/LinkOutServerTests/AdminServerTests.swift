import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutServer

/// The operators' listener asked in-process: its loop is made, never bound.
@Suite struct AdminServerTests {
    /// `operator-key-1`'s SHA-256, as a keys file holds it.
    static let keys = "ops daf123d73d51989bb5974ab0c154edf9ff61b2fe1f0b3f3dbae5a04d98e7717a\n"

    private func admin(keys: String? = nil, ready: Bool = true) throws -> AdminServer {
        let (config, files) = try loadConfig(TestConfig.json(links: sampleLinks))
        var serving = ServingState(config: config, files: files)
        if let keys { serving.adminKeys = try APIKeys.parse(keys).get() }
        return try AdminServer(
            dashboard: nil,
            sources: AdminSources(
                metricsText: { Array("linkout_up 1\n".utf8) },
                readiness: { Readiness(ready: ready, why: ready ? "ready" : "store failing") },
                serving: { [serving] in serving }), clock: .system)
    }

    @Test func healthAndReadinessAsOnTheShoppersListenerWithThisListenersHeaders() throws {
        let admin = try admin(ready: false)
        let health = try #require(try Ask.respond(admin, Wire.request("GET", "/healthz")))
        #expect(health.status == 200 && health.text == "ok\n")
        #expect(health.header("Cache-Control") == "no-store" && health.header("X-Content-Type-Options") == "nosniff")
        let ready = try #require(try Ask.respond(admin, Wire.request("GET", "/readyz")))
        #expect(ready.status == 503 && ready.text == "store failing\n")
    }

    @Test func metricsNeedAnOperatorKeyWhenTheConfigNamesKeys() throws {
        let open = try admin()
        #expect(try Ask.respond(open, Wire.request("GET", "/metrics"))?.text == "linkout_up 1\n")

        let guarded = try admin(keys: Self.keys)
        let refused = try #require(try Ask.respond(guarded, Wire.request("GET", "/metrics")))
        #expect(refused.status == 401)
        #expect(refused.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
        #expect(try Ask.respond(guarded, Wire.request("GET", "/metrics", headers: [("Authorization", "Bearer wrong")]))?.status == 401)
        let allowed = try #require(
            try Ask.respond(guarded, Wire.request("GET", "/metrics", headers: [("Authorization", "Bearer operator-key-1")])))
        #expect(allowed.status == 200 && allowed.text == "linkout_up 1\n")
        #expect(allowed.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        // Load balancers carry no key.
        #expect(try Ask.respond(guarded, Wire.request("GET", "/healthz"))?.status == 200)
    }

    @Test func unknownPathsAre404AndOnlyGetAndHeadAreAnswered() throws {
        let admin = try admin()
        let missing = try #require(try Ask.respond(admin, Wire.request("GET", "/nope")))
        #expect(missing.status == 404 && missing.text.hasPrefix("not found"))
        let post = try #require(try Ask.respond(admin, Wire.request("POST", "/metrics")))
        #expect(post.status == 405 && post.header("Allow") == "GET, HEAD")
        #expect(try Ask.bodyLimit(admin, Wire.request("POST", "/metrics", body: [1])) == 0)
    }
}
