import Foundation
import LinkOutCore
import LinkOutStore
import LinkOutTestSupport
import Logging
import Testing

@testable import LinkOutServer

/// A peer for requests built in a test: a fixed address where a connection would read its socket's.
final class FixedPeer: PeerAddress {
    let peer: String
    init(_ peer: String) { self.peer = peer }
}

/// A request's bytes, as a client would send them.
enum Wire {
    static func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) -> [UInt8] {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: gateway.example\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty { text += "Content-Length: \(body.count)\r\n" }
        return Array((text + "\r\n").utf8) + body
    }
}

extension HTTPRequest {
    /// Parses `bytes` (a whole head, and its body) with `parser`, as the loop does, and calls `body` with
    /// the request from `peer`; like the loop's, the request is valid only during the call.
    static func parsing<Result>(
        _ bytes: [UInt8], peer: String = "192.0.2.10", parser: RequestHeadParser = RequestHeadParser(),
        _ body: (HTTPRequest) throws -> Result
    ) throws -> Result {
        var parser = parser
        let address = FixedPeer(peer)
        return try bytes.withUnsafeBytes { raw in
            guard case .head(let head) = parser.parse(raw) else {
                throw TestFailure("not a whole head: \(parser.parse(raw))")
            }
            try #require(raw.count == head.headLength + head.contentLength, "the body is all there, and nothing after it")
            return try withExtendedLifetime(address) { try body(HTTPRequest(bytes: raw, head: head, peer: address)) }
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What a responder's loop would do with a request: the facts it keeps, the exchange it names, the call.
enum Ask {
    static func respond(
        _ responder: some HTTPResponder, _ bytes: [UInt8], peer: String = "192.0.2.10", parser: RequestHeadParser = RequestHeadParser(),
        sequence: UInt32 = 0
    ) throws -> Reply? {
        try HTTPRequest.parsing(bytes, peer: peer, parser: parser) { request in
            var facts = ExchangeFacts(
                method: request.method, arrivedMs: TimeSource.system.nowMs(), startedMicroseconds: TimeSource.system.monotonicMicroseconds()
            )
            return responder.respond(to: request, exchange: Exchange(connection: 1, sequence: sequence), facts: &facts)
        }
    }

    static func bodyLimit(_ responder: some HTTPResponder, _ bytes: [UInt8], parser: RequestHeadParser = RequestHeadParser()) throws -> Int
    {
        try HTTPRequest.parsing(bytes, parser: parser) { responder.bodyLimit(for: $0) }
    }

    static func refused(
        _ responder: some HTTPResponder, _ refusal: RequestRefusal, _ bytes: [UInt8]?, parser: RequestHeadParser = RequestHeadParser()
    ) throws -> Reply {
        var facts = ExchangeFacts(method: nil, arrivedMs: TimeSource.system.nowMs(), startedMicroseconds: 0)
        guard let bytes else { return responder.refused(refusal, request: nil, facts: &facts) }
        return try HTTPRequest.parsing(bytes, parser: parser) { responder.refused(refusal, request: $0, facts: &facts) }
    }
}

extension Reply {
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A logger that says nothing: the tests assert on answers and counters, not on lines.
let quietLogger = Logger(label: "linkout-test") { _ in SwiftLogNoOpLogHandler() }

/// A config read as `serve` reads it, with the files it names (pages from the package's Public/).
func loadConfig(_ json: String) throws -> (config: GatewayConfig, files: ConfigFiles) {
    let config = try ConfigLoader.load(json: Array(json.utf8), baseDirectory: "/").get()
    var problems: [String] = []
    let files = ConfigFiles.read(config, problems: &problems)
    try #require(problems.isEmpty, "\(problems)")
    return (config, files)
}

/// A new SQLite store in `folder`, its reporting side opened as a part of `serve` opens it (`serve`'s
/// writer creates the file first).
func scratchReportingStore(_ folder: TemporaryFolder) throws -> any ReportingStore {
    let path = folder.file("store.sqlite")
    try SQLiteTokenStore(path: path).close()
    return try openReportingStore(path)
}

/// The sample app's link `/nl`, with one destination.
let sampleLinks = #"[{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/nl" }] }]"#

/// What a gateway responder handed to the writer, in order.
final class WriterJournal: @unchecked Sendable {
    private let lock = NSLock()
    private var _submitted: [(record: VisitRecord, ticket: ReplyTicket)] = []
    private var _refusals: [(link: String, reason: String)] = []
    /// What `submit` answers: false plays a full writer.
    var accepting = true

    var submitted: [(record: VisitRecord, ticket: ReplyTicket)] { lock.withLock { _submitted } }
    var refusals: [(link: String, reason: String)] { lock.withLock { _refusals } }

    func submit(_ record: VisitRecord, _ ticket: ReplyTicket) -> Bool {
        lock.withLock {
            guard accepting else { return false }
            _submitted.append((record, ticket))
            return true
        }
    }

    func noteRefusal(_ link: String, _ reason: String) {
        lock.withLock { _refusals.append((link, reason)) }
    }
}

/// A shoppers' listener for loop 0 of 1, as `LinkOutServer` makes it (its routes: Apple's notifications
/// when the config has them, the link-out), with the writer played by a journal and no socket: its loop is
/// made but never bound nor run.
struct GatewayFixture {
    let responder: ShopperListener
    let writer = WriterJournal()
    let metrics = GatewayMetrics(version: "test")
    let config: GatewayConfig
    /// The notification intake when the config has `notifications` (never started: nothing is verified).
    let notifications: NotificationIntake?
    /// Keeps the intake's store's folder for the test's life.
    private let folder = TemporaryFolder()

    /// - Parameter clock: the one the listener's routes and loop read (a test that needs time steps its own).
    init(
        extra: String = "", links: String = sampleLinks, readiness: Readiness = .init(ready: true, why: "ready"),
        clock: TimeSource = .system
    ) throws {
        let (config, files) = try loadConfig(TestConfig.json(links: links, extra: extra))
        self.config = config
        var serving = ServingState(config: config, files: files)
        serving.linkMetrics = metrics.linkMetrics(for: config.links)
        var exact: [(path: [UInt8], route: any ShopperRoute)] = []
        if let settings = config.notifications, let verifier = files.notificationVerifier {
            let intake = NotificationIntake(
                settings: settings, verifier: verifier, store: try scratchReportingStore(folder), logger: quietLogger,
                metrics: metrics.notifications, deliver: { _, _ in }, wakeReporter: {}, clock: .system)
            let route = NotificationRoute(intake: intake, loop: 0, loopCount: 1, clock: clock)
            exact.append((route.path, route))
            notifications = intake
        } else {
            notifications = nil
        }
        let writer = writer
        let services = LinkOutServices(
            settings: config.server,
            submit: { record, ticket, _ in writer.submit(record, ticket) },
            wakeWriter: {},
            noteRefusal: { link, reason, _ in writer.noteRefusal(link, reason) },
            readiness: { readiness },
            metrics: metrics, unroutedLog: UnroutedLog(logger: quietLogger), clock: clock)
        responder = ShopperListener(
            index: 0, http: try ShopperListener.loop(count: 1, config: config, clock: clock), serving: serving,
            routes: ShopperRoutes(exact: exact, fallback: LinkOutRoute(loop: 0, loopCount: 1, serving: serving, services: services)),
            metrics: metrics, accessLog: nil, logger: quietLogger)
    }

    /// The parser the loop reads heads with (the config's extra headers).
    var parser: RequestHeadParser { responder.http.parserTemplate }

    func respond(_ bytes: [UInt8], peer: String = "192.0.2.10") throws -> Reply? {
        try Ask.respond(responder, bytes, peer: peer, parser: parser)
    }

    func get(_ target: String, peer: String = "192.0.2.10") throws -> Reply? {
        try respond(Wire.request("GET", target), peer: peer)
    }

    /// One sample of the metrics' text exposition (`name{labels}`), or nil when absent.
    func metric(_ series: String) -> Double? {
        let text = String(decoding: metrics.render(queueDepth: 0), as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}

extension ReplyTicket {
    /// The parked link-out, when the ticket is one (strict durability).
    var parked: ParkedVisit? {
        if case .parked(let visit) = self { return visit }
        return nil
    }

    /// Relaxed durability: answered when queued.
    var isAnswered: Bool {
        if case .answered = self { return true }
        return false
    }
}
