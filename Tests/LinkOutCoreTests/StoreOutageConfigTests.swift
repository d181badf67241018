import Testing

@testable import LinkOutCore

@Suite("storeOutage in the config")
struct StoreOutageConfigTests {
    private func load(_ outage: String, base: String = "/etc/linkout") -> Result<GatewayConfig, ConfigError> {
        ConfigLoader.load(json: Array(ConfigLoaderTests.config(extra: #""storeOutage":\#(outage)"#).utf8), baseDirectory: base)
    }

    @Test func spoolIsTheDefault() throws {
        let config = try ConfigLoader.load(json: Array(ConfigLoaderTests.config().utf8), baseDirectory: "/").get()
        #expect(config.storeOutage == StoreOutageSettings(mode: .spool, spoolPath: nil, timeoutMs: 2000))
        #expect(StoreOutageSettings.defaultSpoolPath == "data/spool.sqlite")
    }

    @Test func everyKeyIsRead() throws {
        let config = try load(#"{"mode":"fail-closed","spoolPath":"spool/linkout.sqlite","timeoutMs":750}"#).get()
        #expect(config.storeOutage.mode == .failClosed)
        #expect(config.storeOutage.spoolPath == "/etc/linkout/spool/linkout.sqlite", "relative to the config's folder")
        #expect(config.storeOutage.timeoutMs == 750)
        #expect(try load(#"{"spoolPath":"/var/lib/linkout/spool.sqlite"}"#).get().storeOutage.spoolPath == "/var/lib/linkout/spool.sqlite")
        #expect(try load(#"{"mode":"spool"}"#).get().storeOutage.mode == .spool)
    }

    @Test(arguments: [
        (#"{"mode":"open"}"#, "storeOutage.mode", "must be 'spool'"),
        (#"{"mode":1}"#, "storeOutage.mode", "must be a string"),
        (#"{"spoolPath":""}"#, "storeOutage.spoolPath", "must be a file path"),
        (#"{"spoolPath":"postgres://x/y"}"#, "storeOutage.spoolPath", "must be a file path"),
        (#"{"timeoutMs":50}"#, "storeOutage.timeoutMs", "from 100 to 60000"),
        (#"{"timeoutMs":90000}"#, "storeOutage.timeoutMs", "from 100 to 60000"),
        (#"{"timeoutMs":1.5}"#, "storeOutage.timeoutMs", "whole number"),
        (#"{"spool":"x"}"#, "storeOutage.spool", "unknown key"),
        (#""spool""#, "storeOutage", "must be an object"),
    ])
    func badStoreOutageIsNamed(json: String, key: String, rule: String) {
        guard case .failure(let error) = load(json) else {
            Issue.record("\(json) was accepted")
            return
        }
        #expect(error.problems.contains { $0.key == key && $0.rule.contains(rule) }, "\(error.problems)")
    }
}
