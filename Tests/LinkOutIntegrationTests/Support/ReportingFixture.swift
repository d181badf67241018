import Foundation
import LinkOutCore

/// A linkout with reporting on, against two Apple stand-ins (production and sandbox), with its own
/// store and config in a scratch folder. `report(...)` runs `linkout report run` on the same store.
final class ReportingFixture {
    let folder = TemporaryFolder()
    let production: AppleStandIn
    let sandbox: AppleStandIn
    let configPath: String
    let storePath: String

    static let day: Int64 = 86_400_000

    /// - Parameter reporting: extra members of the `reporting` section (`"timeoutSeconds": 1,`).
    init(reporting extra: String = "", top: String = "") throws {
        production = try AppleStandIn(.production)
        sandbox = try AppleStandIn(.sandbox)
        storePath = folder.file("store.sqlite")
        configPath = folder.write("linkout.json", """
            {
              \(top)
              "store": "\(storePath)",
              "publicDir": "\(LinkoutBinary.packageRoot.path)/Public",
              "apps": [{ "bundleId": "com.example", "appAppleId": 1234567890 }],
              "links": [{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://checkout.example.com/nl" }] }],
              "reporting": {
                \(extra)
                "keyFile": "\(production.keyFile)",
                "keyId": "\(production.keyId)",
                "issuerId": "\(production.issuerId)",
                "productionURL": "\(production.url)",
                "sandboxURL": "\(sandbox.url)",
                "caFile": "\(production.caFile)",
                "gatherSeconds": 0,
                "retrySeconds": 1,
                "pollSeconds": 0.2
              }
            }
            """)
    }

    /// A linkout serving this config (its store the fixture's).
    func serve() throws -> LinkoutServer {
        try LinkoutServer(config: configPath, store: storePath)
    }

    /// Runs `linkout report run` once.
    @discardableResult
    func report() throws -> (status: Int32, stdout: String, stderr: String) {
        try LinkoutBinary.run(["report", "run", "--config", configPath])
    }

    /// `linkout report status --format json`, parsed.
    func status() throws -> [String: Any] {
        let result = try LinkoutBinary.run(["report", "status", "--config", configPath, "--format", "json"])
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw LinkoutServer.StartError(description: "report status failed: \(result.stderr) \(result.stdout)")
        }
        return object
    }

    /// One app-and-environment row of `status()`.
    func statusRow(_ environment: String = "production") throws -> [String: Any] {
        let apps = try status()["apps"] as? [[String: Any]] ?? []
        return apps.first { $0["environment"] as? String == environment } ?? [:]
    }

    /// A link-out of a new token created `ageDays` ago, recorded by `server`; returns its id.
    @discardableResult
    func linkOut(_ server: LinkoutServer, ageDays: Double = 4, sandbox: Bool = false) throws -> String {
        let id = (sandbox ? "SANDBOX_" : "") + UUID().uuidString.lowercased()
        let token = Fixtures.token(id: id, created: Fixtures.nowMs - Int64(ageDays * Double(Self.day)))
        let response = try server.get(Fixtures.linkOut(token: token), headers: ["User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Safari/604.1"])
        guard response.status == 302 else { throw LinkoutServer.StartError(description: "link-out answered \(response.status)") }
        return id
    }
}
