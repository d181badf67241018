import Testing

@testable import LinkOutCore

@Suite("durability in the config")
struct DurabilityConfigTests {
    private func load(_ durability: String) -> Result<GatewayConfig, ConfigError> {
        ConfigLoader.load(json: Array(ConfigLoaderTests.config(extra: #""durability":\#(durability)"#).utf8), baseDirectory: "/")
    }

    @Test func strictIsTheDefault() throws {
        let config = try ConfigLoader.load(json: Array(ConfigLoaderTests.config().utf8), baseDirectory: "/").get()
        #expect(config.server.durability == .strict)
    }

    @Test func relaxedTakesItsWindow() throws {
        #expect(try load(#"{"mode":"relaxed","commitWindowMs":20}"#).get().server.durability == .relaxed(commitWindowMs: 20))
        #expect(try load(#"{"mode":"relaxed"}"#).get().server.durability == .relaxed(commitWindowMs: 50))
        #expect(try load(#"{"mode":"strict"}"#).get().server.durability == .strict)
    }

    @Test(arguments: [
        (#"{"mode":"fast"}"#, "durability.mode", "must be 'strict'"),
        (#"{"mode":"relaxed","commitWindowMs":0}"#, "durability.commitWindowMs", "from 1 to 1000"),
        (#"{"mode":"relaxed","commitWindowMs":5000}"#, "durability.commitWindowMs", "from 1 to 1000"),
        (#"{"mode":"relaxed","window":5}"#, "durability.window", "unknown key"),
        (#""relaxed""#, "durability", "must be an object"),
    ])
    func badDurabilityIsNamed(json: String, key: String, rule: String) {
        guard case .failure(let error) = load(json) else {
            Issue.record("\(json) was accepted")
            return
        }
        #expect(error.problems.contains { $0.key == key && $0.rule.contains(rule) }, "\(error.problems)")
    }
}
