import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

@testable import LinkOutServer

/// The server's parts start in the order listed and stop in the reverse, a part that fails to start
/// leaves nothing running, and the server `serve` builds lists its parts in the order that keeps every
/// part started after what it hands work to.
@Suite struct ServerPartsTests {
    final class Journal: @unchecked Sendable {
        var lines: [String] = []
    }
    struct Refused: Error, CustomStringConvertible {
        var description: String { "port taken" }
    }
    final class Part: ServerPart {
        let partName: String
        let journal: Journal
        let failing: Bool
        init(_ name: String, _ journal: Journal, failing: Bool) {
            partName = name
            self.journal = journal
            self.failing = failing
        }
        func start() throws {
            if failing { throw Refused() }
            journal.lines.append("start \(partName)")
        }
        func stop() { journal.lines.append("stop \(partName)") }
    }

    private func parts(_ journal: Journal, failing: String? = nil) -> ServerParts {
        var parts = ServerParts()
        for name in ["admin", "writer", "api", "loops"] { parts.add(Part(name, journal, failing: name == failing)) }
        return parts
    }

    @Test func startInOrderStopInReverseOnce() throws {
        let journal = Journal()
        var parts = parts(journal)
        try parts.startAll()
        parts.stopAll()
        parts.stopAll()
        #expect(
            journal.lines == [
                "start admin", "start writer", "start api", "start loops",
                "stop loops", "stop api", "stop writer", "stop admin",
            ])
    }

    @Test func aPartThatCannotStartStopsTheOnesBeforeItAndIsNamed() {
        let journal = Journal()
        var parts = parts(journal, failing: "api")
        #expect {
            try parts.startAll()
        } throws: { error in
            "\(error)" == "cannot start api: port taken"
        }
        #expect(journal.lines == ["start admin", "start writer", "stop writer", "stop admin"])
        parts.stopAll()
        #expect(journal.lines.count == 4, "nothing stopped twice")
    }

    /// Every part the config can turn on, from a scratch folder, built as `serve` builds them; then
    /// started on ports the kernel picks and stopped, as `serve` would.
    @Test func theServerServeBuildsStartsItsPartsInTheOrderTheyDependOn() throws {
        let folder = TemporaryFolder()
        // genpkey writes PKCS#8 ("BEGIN PRIVATE KEY"), the form of Apple's .p8 download.
        let key = try Command.run(
            "/usr/bin/env",
            ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", folder.file("AuthKey.p8")])
        try #require(key.status == 0, "\(key.stderr)")
        folder.write("api-keys", "checkout " + String(repeating: "9f", count: 32) + "\n")
        folder.write("stripe-secrets", "whsec_" + String(repeating: "5", count: 32) + "\n")
        var (config, files) = try loadConfig(
            TestConfig.json(
                links: sampleLinks,
                extra: """
                    "server": { "listen": "127.0.0.1:0", "adminListen": "127.0.0.1:0", "threads": 2 },
                    "store": "\(folder.file("store.sqlite"))",
                    "accessLog": { "destination": "off" },
                    "api": { "listen": "127.0.0.1:0", "keysFile": "\(folder.file("api-keys"))" },
                    "notifications": { "path": "/apple/notifications" },
                    "paymentProviders": { "stripe": { "path": "/webhooks/stripe", "signingSecretsFile": "\(folder.file("stripe-secrets"))" } },
                    "reporting": {
                      "keyFile": "\(folder.file("AuthKey.p8"))", "keyId": "ABCDEF1234", "issuerId": "57246542-96fe-1a63-e053-0824d011072a",
                      "productionURL": "https://127.0.0.1:9", "sandboxURL": "https://127.0.0.1:9"
                    },
                    """))
        // What `serve` reads before the server is built (ConfigOption.readReportingKey).
        config.reporting?.privateKeyPEM = try String(contentsOfFile: folder.file("AuthKey.p8"), encoding: .utf8)
        let setup = ServeSetup(
            config: config, configPath: folder.file("linkout.json"), spoolPath: folder.file("spool"), files: files, dashboardAssets: nil,
            accessLogSink: nil, logger: quietLogger, reread: nil, clock: .system)
        let server = try LinkOutServer(setup)
        #expect(
            server.partNames == [
                "the admin listener", "the store's writer", "reporting", "the API listener", "Apple's notifications",
                "Apple's notification history", "the payment providers' webhooks", "the health checks", "the event loops",
            ])
        let listening = try server.start()
        #expect(listening.main.port != 0 && listening.admin?.port != 0 && listening.api?.port != 0)
        server.stop()
    }
}
