import Foundation
import LinkOutCore
import LinkOutTestSupport

/// A linkout with reporting on, against two Apple stand-ins (production and sandbox), with its own
/// store and config in a scratch folder. `report(...)` runs `linkout report run` on the same store.
final class ReportingFixture {
    let folder = TemporaryFolder()
    let production: AppleStandIn
    let sandbox: AppleStandIn
    let configPath: String
    /// The same config without its `reporting` section: a `serve` that records and never reports, for
    /// tests that send with `report run` alone.
    let recordOnlyConfigPath: String
    let storePath: String

    static let day: Int64 = 86_400_000
    /// The checkout's API key (its SHA-256 is in the keys file the config names).
    let apiKey: String

    /// - Parameters:
    ///   - reporting: extra members of the `reporting` section (`"timeoutSeconds": 1,`).
    ///   - store: a PostgreSQL URL to use instead of a SQLite file in the scratch folder.
    ///   - notifications: takes Apple's notifications on `notificationPath`, trusting the tests' root
    ///     (NotificationSigner) instead of Apple's (the reporting config only: they need reporting).
    ///   - gather: `reporting.gatherSeconds`.
    ///   - notificationSettings, apiSettings: extra members of the `notifications` and `api` sections
    ///     (`"rateLimit": {...},`), each ending with a comma.
    ///   - apps: the config's `apps`.
    init(
        reporting extra: String = "", top: String = "", store: String? = nil, notifications: Bool = false, gather: Double = 0,
        notificationSettings: String = "", apiSettings: String = "",
        apps: String = #"[{ "bundleId": "com.example", "appAppleId": 1234567890 }]"#
    ) throws {
        production = try AppleStandIn(.production)
        sandbox = try AppleStandIn(.sandbox)
        storePath = store ?? folder.file("store.sqlite")
        let made = APIKeys.newKey(name: "checkout")
        apiKey = made.key
        folder.write("api-keys", "# the checkout's servers\n\(made.line)\n")
        folder.write("secret", String(repeating: "s", count: 40))
        let notificationSection =
            notifications
            ? """
            "notifications": { \(notificationSettings) "path": "\(Self.notificationPath)", "rootCertificates": ["\(try NotificationSigner.shared().rootPEM)"] },
            """ : ""
        // Every listener on a port the kernel picks, so that a command reading this config as it is
        // (check-config) never meets the default ports, which a `make run` beside the suite serves.
        let common = """
              \(top)
              "server": { "listen": "127.0.0.1:0", "adminListen": "127.0.0.1:0" },
              "api": { \(apiSettings) "listen": "127.0.0.1:0", "keysFile": "api-keys" },
              "signing": { "secretFile": "secret" },
              "store": "\(storePath)",
              "publicDir": "\(LinkoutBinary.packageRoot.path)/Public",
              "apps": \(apps),
              "links": [{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://checkout.example.com/nl" }],
                          "parameters": { "signedReference": true } }]
            """
        recordOnlyConfigPath = folder.write("record-only.json", "{\n\(common)\n}")
        configPath = folder.write(
            "linkout.json",
            """
            {
            \(notificationSection)
            \(common),
              "reporting": {
                \(extra)
                "keyFile": "\(production.keyFile)",
                "keyId": "\(production.keyId)",
                "issuerId": "\(production.issuerId)",
                "productionURL": "\(production.url)",
                "sandboxURL": "\(sandbox.url)",
                "caFile": "\(production.caFile)",
                "gatherSeconds": \(gather),
                "retrySeconds": 1,
                "pollSeconds": 0.2
              }
            }
            """)
    }

    /// A linkout serving this config (its store the fixture's), its API listener on a port of its own.
    /// - Parameters:
    ///   - reporting: false serves the record-only config: nothing is sent until `report()`.
    ///   - threads: the shoppers' loops (a per-client rate is split between them; one makes it exact).
    func serve(reporting: Bool = true, threads: Int = 2) throws -> GatewayProcess {
        try GatewayProcess(
            config: reporting ? configPath : recordOnlyConfigPath, store: storePath, threads: threads,
            extraArguments: ["--api-listen", "127.0.0.1:0"])
    }

    /// `POST /v1/line-items` on `server`'s API listener: the status and the parsed JSON answer.
    /// - Parameter authorization: the header's value; by default the fixture's key, "" for none.
    func post(
        _ server: GatewayProcess, _ body: [String: Any], authorization: String? = nil, path: String = "/v1/line-items"
    ) throws -> (status: Int, json: [String: Any]) {
        try post(server, data: try JSONSerialization.data(withJSONObject: body), authorization: authorization, path: path)
    }

    /// `POST path` with `data` as the body, as it is.
    func post(_ server: GatewayProcess, data: Data, authorization: String? = nil, path: String) throws -> (status: Int, json: [String: Any])
    {
        var head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        let value = authorization ?? "Bearer \(apiKey)"
        if !value.isEmpty { head += "Authorization: \(value)\r\n" }
        head += "Content-Length: \(data.count)\r\nConnection: close\r\n\r\n"
        let connection = try HTTPConnection(port: server.apiPort)
        try connection.sendRaw(Array(head.utf8) + Array(data))
        let response = try connection.readResponse()
        let json = (try? JSONSerialization.jsonObject(with: Data(response.bodyText.utf8))) as? [String: Any] ?? [:]
        return (response.status, json)
    }

    static let notificationPath = "/apple/notifications"

    /// Posts `body` to the notification path of `server`'s shoppers' listener, as Apple does.
    func notify(
        _ server: GatewayProcess, body: [UInt8], method: String = "POST", path: String = ReportingFixture.notificationPath
    ) throws -> HTTPResponse {
        let head =
            "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + (body.isEmpty ? "" : "Content-Length: \(body.count)\r\n") + "Connection: close\r\n\r\n"
        let connection = try HTTPConnection(port: server.port)
        try connection.sendRaw(Array(head.utf8) + body)
        return try connection.readResponse(head: method == "HEAD")
    }

    /// Posts a signed notification; returns the status and the outcome or refusal linkout answered with.
    func notify(_ server: GatewayProcess, _ jws: String) throws -> (status: Int, answer: String) {
        let response = try notify(server, body: NotificationSigner.body(jws))
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response.status, (json["outcome"] ?? json["error"]) as? String ?? response.bodyText)
    }

    /// The refusal's problems as `field: message` lines.
    static func problems(_ json: [String: Any]) -> [String] {
        (json["errors"] as? [[String: Any]] ?? []).map { "\($0["field"] ?? ""): \($0["message"] ?? "")" }
    }

    /// A one-time buy of 2.99 EUR (2.47 + 0.52 tax) in the Netherlands, created now.
    static func buy(_ id: String, created: Int64 = TokenBuilder.nowMs) -> [String: Any] {
        [
            "lineItemId": id, "creationDate": created, "eventType": "BUY", "productType": "ONE_TIME_BUY",
            "productIdentifier": "gems.100", "quantity": 1, "pricingCurrency": "EUR", "reportingCurrency": "EUR",
            "amountTaxExclusive": 2470, "amountTaxInclusive": 2990, "netAmountTaxExclusive": 2470, "taxAmount": 520,
            "taxCountry": "NLD",
        ]
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
            throw GatewayProcess.StartError(description: "report status failed: \(result.stderr) \(result.stdout)")
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
    func linkOut(_ server: GatewayProcess, ageDays: Double = 4, sandbox: Bool = false) throws -> String {
        let id = (sandbox ? "SANDBOX_" : "") + UUID().uuidString.lowercased()
        let token = TokenBuilder.minted(id: id, created: TokenBuilder.nowMs - Int64(ageDays * Double(Self.day)))
        let response = try server.get(
            TokenBuilder.linkOut(token: token), headers: ["User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Safari/604.1"]
        )
        guard response.status == 302 else { throw GatewayProcess.StartError(description: "link-out answered \(response.status)") }
        return id
    }
}
