import Foundation
import LinkOutTestSupport

/// Throwaway certificates for HTTPS destinations, made with the openssl CLI in a test's folder: a CA the
/// test trusts (pass `caFile` to linkout), a server certificate it signed for 127.0.0.1 and localhost, and
/// two that must fail verification: the same names signed by a CA nobody trusts, and a certificate from
/// the trusted CA for another host name.
final class TestCertificates {
    /// A server certificate and its key, as PEM files.
    struct Pair {
        var certificate: String
        var key: String
    }

    /// The CA to trust: `HealthCheckSettings.caFile`, or `healthChecks.caFile` in a config.
    let caFile: String
    /// Signed by `caFile`'s CA, for IP:127.0.0.1 and DNS:localhost.
    let trusted: Pair
    /// For the same names, signed by a CA that is in no bundle.
    let unknownCA: Pair
    /// Signed by `caFile`'s CA, but for DNS:other.invalid only.
    let wrongHost: Pair

    struct OpenSSLError: Error, CustomStringConvertible {
        var description: String
    }

    init(in folder: TemporaryFolder) throws {
        let directory = folder.file("tls")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { directory + "/" + name }

        try Self.makeCA(name: "linkout test CA", certificate: path("ca.pem"), key: path("ca.key"))
        try Self.makeCA(name: "unknown test CA", certificate: path("rogue-ca.pem"), key: path("rogue-ca.key"))
        caFile = path("ca.pem")
        trusted = try Self.makeServer(
            name: "server", altNames: "IP:127.0.0.1,DNS:localhost", ca: path("ca"), directory: directory
        )
        unknownCA = try Self.makeServer(
            name: "rogue-server", altNames: "IP:127.0.0.1,DNS:localhost", ca: path("rogue-ca"), directory: directory
        )
        wrongHost = try Self.makeServer(
            name: "wrong-host", altNames: "DNS:other.invalid", ca: path("ca"), directory: directory
        )
    }

    private static func makeCA(name: String, certificate: String, key: String) throws {
        try openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=\(name)",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
    }

    /// `ca`: the CA's files without their extension (`.pem`, `.key`).
    private static func makeServer(name: String, altNames: String, ca: String, directory: String) throws -> Pair {
        let key = directory + "/" + name + ".key"
        let request = directory + "/" + name + ".csr"
        let certificate = directory + "/" + name + ".pem"
        let extensions = directory + "/" + name + ".ext"
        try Data(
            """
            subjectAltName=\(altNames)
            basicConstraints=critical,CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth

            """.utf8
        ).write(to: URL(fileURLWithPath: extensions))
        try openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", request, "-subj", "/CN=\(name)",
        ])
        try openssl([
            "x509", "-req", "-in", request, "-CA", ca + ".pem", "-CAkey", ca + ".key", "-CAcreateserial",
            "-out", certificate, "-days", "2", "-extfile", extensions,
        ])
        return Pair(certificate: certificate, key: key)
    }

    /// Runs the openssl CLI; throws with its stderr when it fails. Also makes AppleStandIn's In-App Purchase key.
    static func openssl(_ arguments: [String]) throws {
        let result = try Command.run("/usr/bin/env", ["openssl"] + arguments)
        guard result.status == 0 else {
            throw OpenSSLError(description: "openssl \(arguments.joined(separator: " ")) failed: \(result.stderr)")
        }
    }
}

/// A real destination server on 127.0.0.1, HTTP or HTTPS, whose health a test switches at will, and which
/// records every request it answers (so a test can count health checks). It is
/// `Support/test_destination.py`, run with python3, and steered through a control port of its own, which
/// keeps working while the destination is closed or hanging.
///
/// ```swift
/// let folder = TemporaryFolder()
/// let certificates = try TestCertificates(in: folder)
/// let destination = try TestDestination(https: certificates)   // or TestDestination() for http
/// destination.url("/checkout")                                   // "https://127.0.0.1:PORT/checkout"
/// try destination.set(.status(503))                              // .healthy, .hang, .closed, .largeBody(n)
/// try destination.waitForChecks(atLeast: 3)                      // requests with linkout's health User-Agent
/// ```
///
/// Sendable so a test may look at it from a callback on another thread: its own state never changes after
/// init, and each call opens its own control connection.
final class TestDestination: @unchecked Sendable {
    /// How the destination answers from now on.
    enum Mode {
        /// 200 with a 2-byte body.
        case healthy
        /// This status (503 for a failing destination; 302, 404 and so on for the edges of "healthy").
        case status(Int)
        /// Reads the request and never answers (until the mode changes, or for 120 s).
        case hang
        /// The listening socket is closed: connections are refused. Another mode reopens the same port.
        case closed
        /// 200 with a body of this many bytes, sent 64 KiB every 20 ms (for the checker's body cap).
        case largeBody(Int)
    }

    /// Which certificate an HTTPS destination presents to new connections.
    enum Certificate: String {
        case trusted
        case unknownCA = "unknown-ca"
        case wrongHost = "wrong-host"
    }

    /// One request the destination received.
    struct Request: Equatable {
        var method: String
        var path: String
        var userAgent: String
        /// What the destination answered: 0 for a request it hung on.
        var status: Int
    }

    struct ControlError: Error, CustomStringConvertible { var description: String }
    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// The User-Agent of linkout's health checks, which `checks` counts.
    static let healthUserAgent = "linkout-health/1"

    let port: Int
    let controlPort: Int
    let isHTTPS: Bool
    private let helper: PythonHelper

    /// `scheme://127.0.0.1:port`, no trailing slash.
    var origin: String { (isHTTPS ? "https" : "http") + "://127.0.0.1:\(port)" }

    func url(_ path: String = "/") -> String { origin + path }

    /// Starts a plain HTTP destination.
    convenience init() throws {
        try self.init(certificates: nil)
    }

    /// Starts an HTTPS destination presenting `certificates.trusted` (switch with `present(_:)`).
    convenience init(https certificates: TestCertificates) throws {
        try self.init(certificates: certificates)
    }

    private init(certificates: TestCertificates?) throws {
        isHTTPS = certificates != nil
        var arguments: [String] = []
        if let certificates {
            for (name, pair) in [
                (Certificate.trusted, certificates.trusted), (.unknownCA, certificates.unknownCA),
                (.wrongHost, certificates.wrongHost),
            ] {
                arguments += ["--cert", name.rawValue, pair.certificate, pair.key]
            }
        }
        helper = try PythonHelper(script: "test_destination.py", arguments: arguments, what: "the test destination")
        port = helper.port
        controlPort = helper.controlPort
    }

    /// Ends the server (also done when the object goes away).
    func stop() { helper.stop() }

    /// Switches how the destination answers; effective for the next request.
    func set(_ mode: Mode) throws {
        let query =
            switch mode {
            case .healthy: "set=healthy"
            case .status(let status): "set=status&status=\(status)"
            case .hang: "set=hang"
            case .closed: "set=closed"
            case .largeBody(let bytes): "set=healthy&body=\(bytes)"
            }
        try control("/mode?" + query)
    }

    /// Presents another certificate to new connections (HTTPS only).
    func present(_ certificate: Certificate) throws {
        try control("/cert?name=" + certificate.rawValue)
    }

    /// Every request answered (or hung) so far, in arrival order.
    func requests() throws -> [Request] {
        let object = try controlJSON("/requests")
        let list = object["requests"] as? [[String: Any]] ?? []
        return list.map {
            Request(
                method: $0["method"] as? String ?? "", path: $0["path"] as? String ?? "",
                userAgent: $0["userAgent"] as? String ?? "", status: $0["status"] as? Int ?? 0
            )
        }
    }

    /// TLS handshakes that failed (a client refusing the certificate shows up here, not in `requests()`).
    func tlsFailures() throws -> Int {
        try controlJSON("/requests")["tlsFailures"] as? Int ?? 0
    }

    /// Requests from linkout's health checker.
    func checks() throws -> [Request] {
        try requests().filter { $0.userAgent == Self.healthUserAgent }
    }

    /// Waits until at least `count` health checks arrived; how many did. Throws if fewer came in time, so
    /// no test goes on to check the state of a destination that was never checked.
    @discardableResult
    func waitForChecks(atLeast count: Int, timeout: TimeInterval = 10) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var seen = try checks().count
        while seen < count, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            seen = try checks().count
        }
        guard seen >= count else { throw ControlError(description: "\(seen) health checks in \(timeout) s, expected \(count)") }
        return seen
    }

    /// Forgets the requests recorded so far.
    func reset() throws {
        try control("/reset")
    }

    private func control(_ target: String) throws {
        let response = try fetch(port: controlPort, "GET", target)
        guard response.status == 200 else {
            throw StartError(description: "test destination control \(target): \(response.status) \(response.bodyText)")
        }
    }

    private func controlJSON(_ target: String) throws -> [String: Any] {
        let response = try fetch(port: controlPort, "GET", target)
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
            throw ControlError(description: "the control endpoint \(target) answered \(response.status) without JSON")
        }
        return object
    }
}
