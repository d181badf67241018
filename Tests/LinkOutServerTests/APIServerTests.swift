import LinkOutCore
import LinkOutStore
import LinkOutTestSupport
import Testing

@testable import LinkOutServer

/// The checkout's listener asked in-process: its loop is made, never bound, and its worker never
/// started, so a queued request stays queued and owed.
@Suite struct APIServerTests {
    /// `checkout-key-1`'s SHA-256, as a keys file holds it.
    static let keys = "checkout 8d674c5efe164186ec7cfeaa7a3beb1d3e992e45b8b131c0fe90b979ca343e48\n"
    static let bearer = ("Authorization", "Bearer checkout-key-1")
    static let json = ("Content-Type", "application/json")

    private final class Fixture {
        let folder = TemporaryFolder()
        let metrics = GatewayMetrics(version: "test")
        let api: APIServer

        init(maxQueued: Int = 256) throws {
            let (config, _) = try loadConfig(TestConfig.json(links: sampleLinks))
            let keys = try APIKeys.parse(APIServerTests.keys).get()
            let store = try scratchReportingStore(folder)
            var settings = APISettings(listen: ListenAddress(host: "127.0.0.1", port: 0), keysFile: folder.file("keys"))
            settings.maxQueued = maxQueued
            api = try APIServer(
                settings: settings, keys: { keys }, intake: LineItemIntake(store: store, signing: { nil }),
                registrations: TokenRegistrationIntake(store: store, config: { config }, record: { _ in }),
                logger: quietLogger, metrics: metrics.api, clock: .system, stored: {})
        }
    }

    @Test func aRequestWithoutAValidKeyIs401() throws {
        let api = try Fixture().api
        let body = Array("{}".utf8)
        let missing = try #require(try Ask.respond(api, Wire.request("POST", "/v1/line-items", headers: [Self.json], body: body)))
        #expect(missing.status == 401 && missing.header("WWW-Authenticate") == "Bearer")
        let wrong = try #require(
            try Ask.respond(
                api,
                Wire.request(
                    "POST", "/v1/line-items", headers: [("Authorization", "Bearer nope"), Self.json], body: body)))
        #expect(wrong.status == 401)
    }

    @Test func onlyJSONIsTaken() throws {
        let api = try Fixture().api
        let reply = try #require(
            try Ask.respond(
                api,
                Wire.request(
                    "POST", "/v1/tokens", headers: [Self.bearer, ("Content-Type", "text/plain")], body: Array("{}".utf8))))
        #expect(reply.status == 415)
        #expect(reply.text.contains("application/json"))
    }

    @Test func routesAnswerPostOnlyAndOthersAre404() throws {
        let api = try Fixture().api
        let get = try #require(try Ask.respond(api, Wire.request("GET", "/v1/line-items", headers: [Self.bearer])))
        #expect(get.status == 405 && get.header("Allow") == "POST")
        #expect(try Ask.respond(api, Wire.request("POST", "/v1/nothing", headers: [Self.bearer]))?.status == 404)
        #expect(try Ask.respond(api, Wire.request("GET", "/healthz"))?.text == #"{"status":"ok"}"# + "\n")
        #expect(try Ask.bodyLimit(api, Wire.request("POST", "/v1/line-items", body: [1])) == 1_048_576)
        #expect(try Ask.bodyLimit(api, Wire.request("POST", "/v1/nothing", body: [1])) == 0)
    }

    @Test func aValidRequestIsQueuedAndAnsweredLaterAndAFullQueueIs503() throws {
        let api = try Fixture(maxQueued: 1).api
        let request = Wire.request("POST", "/v1/line-items", headers: [Self.bearer, Self.json], body: Array("{}".utf8))
        #expect(try Ask.respond(api, request) == nil, "parked: the worker answers once the store has it")
        let busy = try #require(try Ask.respond(api, request, sequence: 1))
        #expect(busy.status == 503 && busy.header("Retry-After") == "1")
    }
}
