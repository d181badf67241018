import Foundation
import LinkOutTestSupport
import Testing

/// SIGHUP reloads the config on every loop without dropping a connection; a broken config is refused and
/// the previous one keeps serving.
@Suite struct ReloadTests {
    static let configA = TestConfig.json(
        links: """
            [{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/" }] }]
            """)
    static let configB = TestConfig.json(
        links: """
            [{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://b.example.com/" }] },
             { "id": "be", "path": "/be", "country": "be", "destinations": [{ "url": "https://c.example.com/" }] }]
            """)

    /// Replaces the config file in one step, as an operator's deploy tool would.
    static func install(_ text: String, at path: String) throws {
        let temporary = path + ".new"
        try text.write(toFile: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    @Test func twentyReloadsUnderLoadFailNoRequestAndTakeEffect() throws {
        let folder = TemporaryFolder()
        let config = folder.file("config.json")
        try Self.install(Self.configA, at: config)
        let server = try GatewayProcess(config: config, store: folder.file("store.sqlite"))
        let port = server.port

        let failures = LockedList()
        let successes = LockedList()
        let stop = LockedFlag()
        let group = DispatchGroup()
        for worker in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                // Two workers keep one connection, two open a new one for every request.
                var kept = worker < 2 ? try? HTTPConnection(port: port) : nil
                while !stop.isSet {
                    do {
                        let connection = try kept ?? HTTPConnection(port: port)
                        let response = try connection.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()))
                        let location = response[header: "Location"] ?? ""
                        if response.status == 302,
                            location.hasPrefix("https://a.example.com/") || location.hasPrefix("https://b.example.com/")
                        {
                            successes.append(location)
                        } else {
                            failures.append("\(response.status) \(location)")
                        }
                    } catch {
                        failures.append("\(error)")
                        kept = nil
                    }
                }
            }
        }
        for round in 0..<20 {
            try Self.install(round % 2 == 0 ? Self.configB : Self.configA, at: config)
            server.signal(SIGHUP)
            Thread.sleep(forTimeInterval: 0.1)
        }
        try Self.install(Self.configB, at: config)
        server.signal(SIGHUP)
        Thread.sleep(forTimeInterval: 0.3)
        stop.set()
        group.wait()

        #expect(failures.snapshot.isEmpty, "\(failures.count) failed requests: \(failures.snapshot.prefix(5))")
        #expect(successes.count > 100)
        #expect(Set(successes.snapshot.map { $0.prefix(21) }).count == 2, "both configs served during the reloads")
        // The last config is in force: the new link exists and /nl goes to its new destination.
        let newLink = try server.get(TokenBuilder.linkOut("/be", token: TokenBuilder.minted()))
        #expect(newLink.status == 302)
        #expect(newLink[header: "Location"]?.hasPrefix("https://c.example.com/") == true)
        #expect(
            try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()))[header: "Location"]?.hasPrefix(
                "https://b.example.com/") == true)
        // Signals sent while one is being handled may merge into one: at least the last reload happened.
        #expect(server.log.contains("config reloaded"))
    }

    @Test func aBrokenConfigIsRefusedAndTheOldOneKeepsServing() throws {
        let folder = TemporaryFolder()
        let config = folder.file("config.json")
        try Self.install(Self.configB, at: config)
        let server = try GatewayProcess(config: config, store: folder.file("store.sqlite"))
        let connection = try HTTPConnection(port: server.port)
        #expect(try connection.request("GET", TokenBuilder.linkOut("/be", token: TokenBuilder.minted())).status == 302)

        try Self.install(Self.configA.replacingOccurrences(of: "\"nl\", \"destinations\"", with: "\"xx\", \"destinations\""), at: config)
        server.signal(SIGHUP)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(server.log.contains("config reload refused"))
        #expect(server.log.contains("unknown country code 'xx'"))
        // Same connection, old rules.
        #expect(try connection.request("GET", TokenBuilder.linkOut("/be", token: TokenBuilder.minted())).status == 302)
        #expect(server.stop() == 0)
    }
}
