import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// What SIGHUP takes at once beyond the links: the API's keys and the signing secret, so that a leaked
/// key is revoked, or a secret rotated, without a restart; and the warning that names what does wait for
/// one.
@Suite struct ReloadSecretsTests {
    /// Waits until the log says the `count`th reload was taken (or refused).
    private func waitForReload(_ server: GatewayProcess, count: Int = 1) throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let log = server.log
            if log.components(separatedBy: "config reloaded").count - 1 >= count { return }
            if log.contains("config reload refused") {
                Issue.record("reload refused: \(log)")
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("no reload in the log: \(server.log)")
    }

    /// The `linkoutRef` of a fresh link-out's `Location`.
    private func reference(_ server: GatewayProcess) throws -> String {
        let response = try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted()))
        let location = try #require(response[header: "Location"])
        return try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "linkoutRef" }?.value)
    }

    @Test func aReloadRevokesAKeyAndRotatesTheSigningSecretAtOnce() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        let before = try reference(server)
        #expect(try fixture.post(server, ["linkoutRef": before, "lineItems": [ReportingFixture.buy("order-1")]]).status == 200)

        // The old key out, a new one in; a new secret; and a setting only a restart applies.
        let rotated = APIKeys.newKey(name: "checkout-2")
        fixture.folder.write("api-keys", "\(rotated.line)\n")
        fixture.folder.write("secret", String(repeating: "t", count: 40))
        let config = try String(contentsOfFile: fixture.recordOnlyConfigPath, encoding: .utf8)
        try config.replacingOccurrences(of: #""keysFile": "api-keys""#, with: #""keysFile": "api-keys", "maxBodyBytes": 4096"#)
            .write(toFile: fixture.recordOnlyConfigPath, atomically: true, encoding: .utf8)
        server.signal(SIGHUP)
        try waitForReload(server)

        let revoked = try fixture.post(server, ["linkoutRef": before, "lineItems": [ReportingFixture.buy("order-2")]])
        #expect(revoked.status == 401, "the removed key still works: \(revoked)")
        let stale = try fixture.post(
            server, ["linkoutRef": before, "lineItems": [ReportingFixture.buy("order-2")]], authorization: "Bearer \(rotated.key)")
        #expect(stale.status == 400, "a reference signed with the old secret: \(stale)")
        #expect(ReportingFixture.problems(stale.json).contains { $0.hasPrefix("linkoutRef: its signature does not verify") })
        let after = try reference(server)
        let taken = try fixture.post(
            server, ["linkoutRef": after, "lineItems": [ReportingFixture.buy("order-3")]], authorization: "Bearer \(rotated.key)")
        #expect(taken.status == 200, "a reference signed with the new secret, with the new key: \(taken)")

        // One line names what waits for a restart, and neither the keys nor the secret are in it.
        let warning = try #require(server.log.split(separator: "\n").first { $0.contains("take effect only on a restart") })
        #expect(warning.hasSuffix("take effect only on a restart: api"), "\(warning)")
        #expect(server.stop() == 0)
    }

    @Test func aReloadThatCannotReadAKeysFileIsRefusedAndTheOldKeysStay() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        try FileManager.default.removeItem(atPath: fixture.folder.file("api-keys"))
        server.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while !server.log.contains("config reload refused"), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(server.log.contains("config reload refused"))
        #expect(server.log.contains("api.keysFile: cannot read"), "the same line as check-config's")
        // The keys read at start still open the door.
        #expect(
            try fixture.post(
                server, ["externalPurchaseId": UUID().uuidString.lowercased(), "lineItems": [ReportingFixture.buy("order-1")]]
            ).status == 404)
        #expect(server.stop() == 0)
    }
}
