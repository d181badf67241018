import Foundation
import LinkOutCore
import LinkOutServer
import LinkOutTestSupport
import Logging
import Testing

/// The health checker on its own thread, against real local HTTP and HTTPS servers: thresholds, TLS
/// verification, timeouts, and a prompt stop.
@Suite("health checker against real destinations", .serialized)
struct HealthCheckerTests {
    /// Fast rounds so thresholds are crossed in well under a second.
    static func settings(
        intervalMs: Int = 50, timeoutMs: Int = 1_000, downAfter: Int = 3, upAfter: Int = 2, caFile: String? = nil
    ) -> HealthCheckSettings {
        HealthCheckSettings(intervalMs: intervalMs, timeoutMs: timeoutMs, downAfter: downAfter, upAfter: upAfter, caFile: caFile)
    }

    @Test func goesDownAfterDownAfterFailuresAndUpAfterUpAfterSuccesses() throws {
        let destination = try TestDestination()
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let run = CheckerRun(targets: [target], settings: Self.settings(downAfter: 3, upAfter: 2), snapshot: destination)
        defer { run.checker.stop() }

        #expect(try destination.waitForChecks(atLeast: 3) >= 3)
        #expect(run.slot(target).isUp)
        #expect(run.slot(target).lastUpMs > 0, "seen up by a check")
        #expect(run.transitions.events.isEmpty)
        let check = try #require(try destination.checks().first)
        #expect(check.method == "GET" && check.path == "/health" && check.userAgent == "linkout-health/1")

        try destination.set(.status(503))
        let down = try #require(run.transitions.wait(count: 1).first)
        #expect(down.target == target && !down.up)
        #expect(!run.slot(target).isUp)
        // The transition comes on the third failure in a row, before the next round: exactly three 503s.
        #expect(down.checks.filter { $0.status == 503 }.count == 3)
        #expect(run.logs.contains(level: .warning, message: "destination down", metadata: ["url": target.url, "reason": "status 503"]))

        let lastUpWhileDown = run.slot(target).lastUpMs
        try destination.set(.healthy)
        let up = try #require(run.transitions.wait(count: 2).last)
        #expect(up.target == target && up.up)
        #expect(run.slot(target).isUp)
        #expect(run.slot(target).lastUpMs > lastUpWhileDown)
        let sinceDown = up.checks.dropFirst(down.checks.count)
        #expect(sinceDown.filter { $0.status == 200 }.count == 2, "up on the second success in a row")
        #expect(run.logs.contains(level: .warning, message: "destination up", metadata: ["url": target.url]))
    }

    @Test func headOnTheOriginOfADestination() throws {
        let destination = try TestDestination()
        let target = try #require(HealthTarget.origin(of: destination.url("/checkout/nl?plan=annual")))
        let run = CheckerRun(targets: [target], settings: Self.settings())
        defer { run.checker.stop() }

        try destination.waitForChecks(atLeast: 1)
        let check = try #require(try destination.checks().first)
        #expect(check.method == "HEAD" && check.path == "/")
    }

    @Test func aRedirectPassesAndIsNotFollowed() throws {
        let destination = try TestDestination()
        try destination.set(.status(302))
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let run = CheckerRun(targets: [target], settings: Self.settings(downAfter: 1))
        defer { run.checker.stop() }

        try destination.waitForChecks(atLeast: 3)
        #expect(run.slot(target).isUp)
        #expect(run.transitions.events.isEmpty)
        #expect(try destination.requests().allSatisfy { $0.path == "/health" }, "the Location is never asked for")
    }

    @Test(arguments: [404, 500, 503])
    func statusesOutside200To399Fail(status: Int) throws {
        let destination = try TestDestination()
        try destination.set(.status(status))
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let run = CheckerRun(targets: [target], settings: Self.settings(downAfter: 1))
        defer { run.checker.stop() }

        #expect(run.transitions.wait(count: 1).first?.up == false)
        #expect(run.logs.contains(level: .warning, message: "destination down", metadata: ["reason": "status \(status)"]))
    }

    /// An origin check asks only whether the server answers: a 404 or 405 to `HEAD /` is up, a 5xx down.
    @Test(arguments: [(404, true), (405, true), (500, false), (503, false)])
    func anOriginCheckPassesOn4xxNot5xx(status: Int, up: Bool) throws {
        let destination = try TestDestination()
        try destination.set(.status(status))
        let target = try #require(HealthTarget.origin(of: destination.url("/checkout")))
        let run = CheckerRun(targets: [target], settings: Self.settings(downAfter: 1, upAfter: 1))
        defer { run.checker.stop() }
        try destination.waitForChecks(atLeast: 2)
        #expect(run.slot(target).isUp == up)
    }

    @Test func httpsWithTheTrustedCAPasses() throws {
        let folder = TemporaryFolder()
        let certificates = try TestCertificates(in: folder)
        let destination = try TestDestination(https: certificates)
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let run = CheckerRun(targets: [target], settings: Self.settings(downAfter: 1, caFile: certificates.caFile))
        defer { run.checker.stop() }

        try destination.waitForChecks(atLeast: 3)
        #expect(try destination.checks().allSatisfy { $0.status == 200 })
        #expect(run.slot(target).isUp)
        #expect(run.transitions.events.isEmpty)
        #expect(try destination.tlsFailures() == 0)
    }

    @Test func httpsByName() throws {
        // `localhost` is in the certificate too; the host name is checked, not just the chain.
        let folder = TemporaryFolder()
        let certificates = try TestCertificates(in: folder)
        let destination = try TestDestination(https: certificates)
        let target = HealthTarget(url: "https://localhost:\(destination.port)/health", method: .get)
        let run = CheckerRun(targets: [target], settings: Self.settings(downAfter: 1, caFile: certificates.caFile))
        defer { run.checker.stop() }

        // localhost may resolve to ::1 first; the destination listens on 127.0.0.1 and curl falls back.
        try destination.waitForChecks(atLeast: 2)
        #expect(run.slot(target).isUp)
        #expect(run.transitions.events.isEmpty)
    }

    @Test(arguments: [TestDestination.Certificate.unknownCA, .wrongHost])
    func aCertificateThatFailsVerificationCountsAsDown(certificate: TestDestination.Certificate) throws {
        let folder = TemporaryFolder()
        let certificates = try TestCertificates(in: folder)
        let destination = try TestDestination(https: certificates)
        try destination.present(certificate)
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let run = CheckerRun(targets: [target], settings: Self.settings(downAfter: 2, caFile: certificates.caFile))
        defer { run.checker.stop() }

        let down = try #require(run.transitions.wait(count: 1).first)
        #expect(!down.up)
        #expect(!run.slot(target).isUp)
        #expect(try destination.checks().isEmpty, "no request is sent over a connection that failed verification")
        let reason = try #require(run.logs.entries.first { $0.message == "destination down" }?.metadata["reason"])
        switch certificate {
        case .unknownCA:
            // The chain is refused inside the handshake, which the destination sees fail.
            #expect(try destination.tlsFailures() >= 2)
            #expect(reason.contains("certificate"), "\(reason)")
        default:
            // The host name is compared once the handshake is done: the connection is closed unused.
            #expect(reason.contains("name"), "\(reason)")
        }

        // Back to the trusted certificate: up again.
        try destination.present(.trusted)
        #expect(run.transitions.wait(count: 2).last?.up == true)
    }

    @Test func withoutCaFileTheSystemsCAsAreUsedAndATestCAIsNotTrusted() throws {
        let folder = TemporaryFolder()
        let certificates = try TestCertificates(in: folder)
        let destination = try TestDestination(https: certificates)
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let run = CheckerRun(targets: [target], settings: Self.settings(downAfter: 1, caFile: nil))
        defer { run.checker.stop() }

        #expect(run.transitions.wait(count: 1).first?.up == false)
    }

    @Test func aHungServerFailsWithinTheTimeout() throws {
        let destination = try TestDestination()
        try destination.set(.hang)
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let started = Date()
        let run = CheckerRun(targets: [target], settings: Self.settings(intervalMs: 50, timeoutMs: 300, downAfter: 2))
        defer { run.checker.stop() }

        let down = try #require(run.transitions.wait(count: 1, timeout: 10).first)
        let elapsed = Date().timeIntervalSince(started)
        #expect(!down.up)
        // Two checks of 300 ms each and one 50 ms pause, with room for a loaded machine (the sanitizer
        // suites); never curl's default of minutes.
        #expect(elapsed >= 0.55 && elapsed < 5, "\(elapsed) s")
        let reason = try #require(run.logs.entries.first { $0.message == "destination down" }?.metadata["reason"])
        #expect(reason.lowercased().contains("timed out") || reason.lowercased().contains("timeout"), "\(reason)")
        try destination.set(.healthy)
    }

    @Test func aClosedPortFails() throws {
        let destination = try TestDestination()
        try destination.set(.closed)
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let run = CheckerRun(targets: [target], settings: Self.settings(downAfter: 2))
        defer { run.checker.stop() }

        #expect(run.transitions.wait(count: 1).first?.up == false)
        // The same port opens again: up again.
        try destination.set(.healthy)
        #expect(run.transitions.wait(count: 2).last?.up == true)
    }

    @Test func aLargeBodyIsCappedNotReadToTheEnd() throws {
        // 100 MB at 64 KiB per 20 ms would take half an hour; the check stops reading at its cap.
        let destination = try TestDestination()
        try destination.set(.largeBody(100_000_000))
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let run = CheckerRun(targets: [target], settings: Self.settings(timeoutMs: 1_000, downAfter: 1))
        defer { run.checker.stop() }

        try destination.waitForChecks(atLeast: 3, timeout: 10)
        #expect(run.slot(target).isUp)
        #expect(run.transitions.events.isEmpty)
    }

    @Test func manyTargetsAreCheckedAtOnce() throws {
        // Five hung targets and one healthy one, 1 s timeout: one round takes one timeout (1 s), where
        // checking them in turn would take five; the bound leaves room for a loaded machine between.
        let hung = try (0..<5).map { _ in try TestDestination() }
        for destination in hung { try destination.set(.hang) }
        let healthy = try TestDestination()
        let targets = (hung + [healthy]).map { HealthTarget(url: $0.url("/health"), method: .get) }
        let started = Date()
        let run = CheckerRun(targets: targets, settings: Self.settings(intervalMs: 10_000, timeoutMs: 1_000, downAfter: 1))
        defer { run.checker.stop() }

        let events = run.transitions.wait(count: 5, timeout: 10)
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(Set(events.map(\.target)) == Set(targets.prefix(5)))
        #expect(run.slot(targets[5]).isUp)
        for destination in hung { try destination.set(.healthy) }
    }

    @Test func stopIsPromptMidCheckAndMidSleep() throws {
        // Mid-check: a 10 s timeout against a hung server.
        let destination = try TestDestination()
        try destination.set(.hang)
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let hung = CheckerRun(targets: [target], settings: Self.settings(intervalMs: 60_000, timeoutMs: 10_000))
        try destination.waitForChecks(atLeast: 1)
        var started = Date()
        hung.checker.stop()
        #expect(Date().timeIntervalSince(started) < 3, "stop() waited for the 10 s check")
        try destination.set(.healthy)

        // Mid-sleep: a 60 s interval after the first round.
        try destination.reset()
        let sleeping = CheckerRun(targets: [target], settings: Self.settings(intervalMs: 60_000))
        try destination.waitForChecks(atLeast: 1)
        Thread.sleep(forTimeInterval: 0.1)
        started = Date()
        sleeping.checker.stop()
        #expect(Date().timeIntervalSince(started) < 3, "stop() waited out the 60 s interval")
        sleeping.checker.stop()  // a second stop is harmless
    }

    @Test func newSettingsApplyWithoutWaitingOutTheOldInterval() throws {
        let destination = try TestDestination()
        let target = HealthTarget(url: destination.url("/health"), method: .get)
        let run = CheckerRun(targets: [target], settings: Self.settings(intervalMs: 60_000))
        defer { run.checker.stop() }

        #expect(try destination.waitForChecks(atLeast: 1) == 1)
        run.checker.update(settings: Self.settings(intervalMs: 50))
        #expect(try destination.waitForChecks(atLeast: 4, timeout: 5) >= 4)
    }

    @Test func targetsDroppedFromTheBoardAreNoLongerChecked() throws {
        let kept = try TestDestination()
        let dropped = try TestDestination()
        let keptTarget = HealthTarget(url: kept.url("/health"), method: .get)
        let droppedTarget = HealthTarget(url: dropped.url("/health"), method: .get)
        let run = CheckerRun(targets: [keptTarget, droppedTarget], settings: Self.settings())
        defer { run.checker.stop() }

        try dropped.waitForChecks(atLeast: 1)
        run.board.retain(only: [keptTarget])
        // A round in flight may still reach it; after that, nothing.
        Thread.sleep(forTimeInterval: 0.3)
        let before = try dropped.checks().count
        let keptBefore = try kept.checks().count
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try dropped.checks().count == before)
        #expect(try kept.checks().count > keptBefore)
    }
}

// MARK: - Support

/// A checker started on a fresh board with the given targets, its transitions and logs collected.
final class CheckerRun {
    let board = DestinationHealthBoard()
    let transitions = TransitionRecorder()
    let logs = CollectedLogs()
    let checker: HealthChecker

    /// `snapshot`: a destination whose requests are read at each transition, on the checker's thread,
    /// so a test can tell exactly which results led to it.
    init(targets: [HealthTarget], settings: HealthCheckSettings, snapshot: TestDestination? = nil) {
        for target in targets { _ = board.slot(for: target) }
        let logs = logs
        var logger = Logger(label: "linkout.health.test") { _ in CollectingLogHandler(logs: logs) }
        logger.logLevel = .debug
        let transitions = transitions
        checker = HealthChecker(board: board, settings: settings, logger: logger, clock: .system) { target, up in
            let checks = (try? snapshot?.checks()) ?? []
            transitions.append(.init(target: target, up: up, checks: checks))
        }
        checker.start()
    }

    func slot(_ target: HealthTarget) -> HealthSlot { board.slot(for: target) }
}

/// The checker's `onTransition` calls, in order.
final class TransitionRecorder: @unchecked Sendable {
    struct Event {
        var target: HealthTarget
        var up: Bool
        /// The destination's health checks as of the transition (when the run has a snapshot destination).
        var checks: [TestDestination.Request]
    }

    private let condition = NSCondition()
    private var recorded: [Event] = []

    func append(_ event: Event) {
        condition.lock()
        recorded.append(event)
        condition.broadcast()
        condition.unlock()
    }

    var events: [Event] {
        condition.lock()
        defer { condition.unlock() }
        return recorded
    }

    /// Waits for at least `count` events; those seen by then.
    func wait(count: Int, timeout: TimeInterval = 10) -> [Event] {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while recorded.count < count, condition.wait(until: deadline) {}
        return recorded
    }
}

/// Log records kept for assertions.
final class CollectedLogs: @unchecked Sendable {
    struct Entry {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let lock = NSLock()
    private var kept: [Entry] = []

    func append(_ entry: Entry) {
        lock.lock()
        kept.append(entry)
        lock.unlock()
    }

    var entries: [Entry] {
        lock.lock()
        defer { lock.unlock() }
        return kept
    }

    func contains(level: Logger.Level, message: String, metadata: [String: String] = [:]) -> Bool {
        entries.contains { entry in
            entry.level == level && entry.message == message && metadata.allSatisfy { entry.metadata[$0.key] == $0.value }
        }
    }
}

struct CollectingLogHandler: LogHandler {
    let logs: CollectedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var flat: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { flat[key] = "\(value)" }
        logs.append(.init(level: event.level, message: "\(event.message)", metadata: flat))
    }
}
