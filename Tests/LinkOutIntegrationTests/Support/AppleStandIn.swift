import Foundation

#if canImport(Glibc)
import Glibc
import LinkOutTestSupport
#endif

/// A stand-in for Apple's External Purchase Server API for one environment: `Support/apple_standin.py`,
/// run with python3, which checks each report's JWT with PyJWT and its body with jsonschema against
/// `docs/apple/external-purchase-report.schema.json` (see the script's docstring for every check), and
/// records what it received. Its HTTPS port serves only Apple's API; a plain-HTTP control port on
/// 127.0.0.1 steers it, so the control calls need no TLS and keep working while the API hangs.
/// The same script serves operators too: `scripts/apple-standin` runs it `--standalone` (docs/reporting.md,
/// "Try reporting locally"), so a change to its checks changes what that guide shows.
///
/// ```swift
/// let apple = try AppleStandIn(.production)     // another process for .sandbox
/// apple.url                                     // "https://127.0.0.1:PORT": linkout's Apple base URL
/// apple.caFile; apple.keyFile; apple.keyId; apple.issuerId
/// try apple.register(externalPurchaseId: "abc", bundleId: "com.example.app")   // then bid must match
/// try apple.setMode(.rateLimited, count: 2, retryAfterMs: 500)
/// let accepted = try apple.waitForAccepted(count: 1)
/// ```
///
/// Sendable so a test may look at it from another thread: its own state never changes after init, and
/// each control call opens its own connection.
final class AppleStandIn: @unchecked Sendable {
    enum Environment: String, Sendable {
        case production, sandbox
    }

    /// How the next report PUTs are answered (`setMode`); the script's docstring has the details.
    enum Mode: String, Sendable {
        /// The normal checks.
        case ok
        /// 400 naming the body's first lineItemId.
        case error400
        /// The normal checks, then an accepted report is kept but answered 400 DuplicateValueError.
        case duplicate
        /// 401.
        case unauthorized
        /// 429, with Retry-After in Unix milliseconds when `retryAfterMs` is given.
        case rateLimited
        /// 500.
        case serverError
        /// Reads the request and never answers (60 s, or until `reset()`).
        case hang
    }

    struct StandInError: Error, CustomStringConvertible {
        var description: String
    }

    let environment: Environment
    /// `https://127.0.0.1:PORT`, no trailing slash: the base URL for Apple's API in linkout's config.
    let url: String
    let port: Int
    let controlPort: Int
    /// The test CA that signed the stand-in's certificate: what linkout must trust.
    var caFile: String { Self.materials.certificates.caFile }
    /// The In-App Purchase private key, a PKCS#8 PEM exactly like the `.p8` App Store Connect gives.
    var keyFile: String { Self.materials.keyFile }
    /// Its public key (PEM): what the stand-in verifies signatures with.
    var publicKeyFile: String { Self.materials.publicKeyFile }
    /// The JWT header `kid` the stand-in expects.
    var keyId: String { Self.materials.keyId }
    /// The JWT claim `iss` the stand-in expects.
    var issuerId: String { Self.materials.issuerId }

    private let helper: PythonHelper

    init(_ environment: Environment) throws {
        self.environment = environment
        let materials = try Self.materialsOrError.get()
        let root = LinkoutBinary.packageRoot.path
        helper = try PythonHelper(
            script: "apple_standin.py",
            arguments: [
                "--environment", environment.rawValue,
                "--cert", materials.certificates.trusted.certificate, materials.certificates.trusted.key,
                "--public-key", materials.publicKeyFile,
                "--key-id", materials.keyId,
                "--issuer-id", materials.issuerId,
                "--schema", root + "/docs/apple/external-purchase-report.schema.json",
            ],
            errors: materials.folder.file("apple-standin-\(environment.rawValue)-\(UUID().uuidString).err"),
            what: "the Apple stand-in (\(environment.rawValue); scripts/install-deps installs PyJWT and jsonschema)")
        port = helper.port
        controlPort = helper.controlPort
        url = "https://127.0.0.1:\(port)"
    }

    /// Ends the server (also done when the object goes away).
    func stop() { helper.stop() }

    /// The next `count` report PUTs get `mode`'s answer instead of the normal checks; then back to normal.
    func setMode(_ mode: Mode, count: Int = 1, retryAfterMs: Int? = nil) throws {
        var request: [String: Any] = ["mode": mode.rawValue, "count": count]
        if let retryAfterMs { request["retryAfterMs"] = retryAfterMs }
        try control("POST", "/_standin/mode", request)
    }

    /// How the next report GETs are answered (`setLookupMode`).
    enum LookupMode: String, Sendable {
        case ok, unauthorized, rateLimited, serverError
    }

    /// The next `count` report GETs get `mode`'s answer instead of Apple's copy; then back to normal.
    func setLookupMode(_ mode: LookupMode, count: Int = 1, retryAfterMs: Int? = nil) throws {
        var request: [String: Any] = ["mode": mode.rawValue, "count": count]
        if let retryAfterMs { request["retryAfterMs"] = retryAfterMs }
        try control("POST", "/_standin/lookup-mode", request)
    }

    /// Changes Apple's stored copy of an accepted report, as the GET then returns it: the member at `path`
    /// (keys and indexes, `["lineItems", 0, "taxAmount"]`) set to `value`, or removed when `value` is nil.
    func tamper(requestIdentifier: String, path: [Any], value: Any?) throws {
        var request: [String: Any] = ["requestIdentifier": requestIdentifier, "path": path]
        if let value { request["value"] = value } else { request["remove"] = true }
        try control("POST", "/_standin/tamper", request)
    }

    /// The member at `path` set to the JSON `text`, parsed by the stand-in: its member order and a number
    /// written `2990.0` are kept as written, as Apple's own serialiser might write them.
    func tamper(requestIdentifier: String, path: [Any], json text: String) throws {
        try control("POST", "/_standin/tamper", ["requestIdentifier": requestIdentifier, "path": path, "valueJSON": text])
    }

    /// Apple no longer returns this accepted report: its GET answers 404.
    func forget(requestIdentifier: String) throws {
        try control("POST", "/_standin/tamper", ["requestIdentifier": requestIdentifier, "forget": true])
    }

    /// Every normally checked PUT stays in flight this long, so overlapping reports for one token can be
    /// provoked (Apple refuses them as a simultaneous submission).
    func setLatency(ms: Int) throws {
        try control("POST", "/_standin/latency", ["ms": ms])
    }

    /// Reports for this token must then come with a JWT whose `bid` is `bundleId` (else 401). A token
    /// never registered accepts any non-empty `bid`.
    func register(externalPurchaseId: String, bundleId: String) throws {
        try control("POST", "/_standin/register", ["externalPurchaseId": externalPurchaseId, "bundleId": bundleId])
    }

    /// Every report PUT received, in order, each with requestIdentifier, externalPurchaseId, status, body,
    /// jwtHeader, jwtClaims, answer (the status code; 0 for a hung one), accepted, receivedAt (Unix ms) and
    /// problems (why it was refused; empty when accepted).
    func reports() throws -> [[String: Any]] {
        try controlList("/_standin/reports")
    }

    /// The externalPurchaseIds of the reports Apple is processing now.
    func inFlight() throws -> [String] {
        try controlList("/_standin/inflight").compactMap { $0["externalPurchaseId"] as? String }
    }

    /// The accepted reports only, in order (a `duplicate`-mode report is among them).
    func accepted() throws -> [[String: Any]] {
        try controlList("/_standin/accepted")
    }

    /// Every report GET: requestIdentifier, answer, problems, receivedAt.
    func lookups() throws -> [[String: Any]] {
        try controlList("/_standin/lookups")
    }

    /// Waits until at least `count` reports were accepted and returns them. Throws if fewer were in time,
    /// with what was received and why it was refused, so the test log says what linkout got wrong.
    @discardableResult
    func waitForAccepted(count: Int, timeout: TimeInterval = 10) throws -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(timeout)
        var seen = try accepted()
        while seen.count < count, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            seen = try accepted()
        }
        guard seen.count >= count else {
            let received = try reports().map { "\($0["answer"] ?? "?") \($0["problems"] ?? "")" }
            throw StandInError(
                description: """
                    \(seen.count) reports accepted by the \(environment.rawValue) stand-in in \(timeout) s, expected \
                    \(count); received: \(received)
                    """)
        }
        return seen
    }

    /// A notification Apple's notification history holds for `bundleId`, returned to a request whose span
    /// holds `signedDate`.
    func addToHistory(_ jws: String, bundleId: String = "com.example", signedDate: Int64) throws {
        try control("POST", "/_standin/history", ["signedPayload": jws, "bundleId": bundleId, "signedDate": signedDate])
    }

    /// The next `failures` history requests answer 500; `pageSize` records a page (Apple's is 20).
    func setHistory(failures: Int = 0, pageSize: Int = 20) throws {
        try control("POST", "/_standin/history-mode", ["mode": "serverError", "count": failures, "pageSize": pageSize])
    }

    /// Every history request: query, body, bid, answer, problems, receivedAt.
    func historyRequests() throws -> [[String: Any]] {
        try controlList("/_standin/history-requests")
    }

    /// Forgets reports, lookups, registrations, the mode and the latency; ends any hang.
    func reset() throws {
        try control("POST", "/_standin/reset", [:])
    }

    @discardableResult
    private func control(_ method: String, _ path: String, _ json: [String: Any]? = nil) throws -> HTTPResponse {
        let body = try json.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let head =
            "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let connection = try HTTPConnection(port: controlPort)
        try connection.sendRaw(Array(head.utf8) + Array(body))
        let response = try connection.readResponse()
        guard response.status == 200 else {
            throw StandInError(description: "Apple stand-in control \(method) \(path): \(response.status) \(response.bodyText)")
        }
        return response
    }

    private func controlList(_ path: String) throws -> [[String: Any]] {
        let response = try control("GET", path)
        guard let list = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [[String: Any]] else {
            throw StandInError(description: "Apple stand-in control \(path) answered without a JSON list: \(response.bodyText)")
        }
        return list
    }

    // MARK: - Made once per process

    /// The test CA and server certificate (TestCertificates, as TestDestination uses) and the In-App
    /// Purchase key, shared by every stand-in of the process: both environments trust one CA and accept
    /// one key, as Apple's do. Left in the temporary folder at exit (a static is never deinitialised).
    final class Materials: @unchecked Sendable {  // never changes after init
        let folder: TemporaryFolder
        let certificates: TestCertificates
        let keyFile: String
        let publicKeyFile: String
        let keyId: String
        let issuerId: String

        init() throws {
            folder = TemporaryFolder()
            certificates = try TestCertificates(in: folder)
            keyFile = folder.file("AuthKey.p8")
            publicKeyFile = folder.file("AuthKey.pub.pem")
            // genpkey writes PKCS#8 ("BEGIN PRIVATE KEY"), the form of Apple's .p8 download.
            try TestCertificates.openssl([
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile,
            ])
            try TestCertificates.openssl(["pkey", "-in", keyFile, "-pubout", "-out", publicKeyFile])
            // Shaped like Apple's: a 10-character key ID, a UUID issuer ID.
            keyId = String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(10))
            issuerId = UUID().uuidString.lowercased()
        }
    }

    private static let materialsOrError = Result { try Materials() }
    /// Only read after `init` succeeded, which needed them.
    private static var materials: Materials { try! materialsOrError.get() }
}
