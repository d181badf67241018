import CoreMetrics
import LinkOutCore
import LinkOutStore
import Logging

/// The destinations' health as the running server watches it: the checker (started once the config names
/// a check, at start or by the first reload that names one), each destination's gauge, the up and down
/// periods the dashboard charts (through the writer), and a log line each time a destination set comes to
/// have no destination up, or has one again.
final class HealthWatch: @unchecked Sendable {
    /// Shared with every `Gateway` this server runs (they read it per request), kept across reloads.
    let board: DestinationHealthBoard
    private let metrics: GatewayMetrics
    private let logger: Logger
    private let clock: TimeSource
    /// The writer: a destination's change, stored with its next batch.
    private let noteHealth: @Sendable (_ target: String, _ up: Bool, _ atMs: Int64) -> Void
    /// The gateway serving now, read on the checker's thread after a change.
    private let gateway: @Sendable () -> Gateway
    /// Set on the main thread (start, reloads) only.
    private var checker: HealthChecker?
    /// The destination sets logged as all down, to log each change once. Locked: the checker's thread and
    /// reloads (on the main thread) both update it.
    private let setsAllDown = Locked(Set<String>())

    init(
        board: DestinationHealthBoard, metrics: GatewayMetrics, logger: Logger, clock: TimeSource,
        noteHealth: @escaping @Sendable (String, Bool, Int64) -> Void, gateway: @escaping @Sendable () -> Gateway
    ) {
        self.board = board
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.noteHealth = noteHealth
        self.gateway = gateway
    }

    /// Starts checking, off the loop threads, if the serving config names a check.
    func start() {
        startChecks(gateway())
    }

    func stop() {
        checker?.stop()
    }

    /// After a reload installed `state`: the board keeps only its targets, the checker takes its settings
    /// (or starts, if this is the first config with a check), new targets get their gauge now, and a set
    /// the reload left with every destination down is said.
    func reloaded(to now: Gateway, from previous: Gateway) {
        board.retain(only: now.healthTargets)
        if let checker {
            checker.update(settings: now.config.healthChecks)
            for target in now.healthTargets.subtracting(previous.healthTargets) {
                metrics.destinationUp(target.url).record(board.slot(for: target).isUp ? 1 : 0)
            }
        } else {
            startChecks(now)
        }
        reportSetsAllDown(now)
    }

    private func startChecks(_ gateway: Gateway) {
        guard checker == nil, !gateway.healthTargets.isEmpty else { return }
        for target in gateway.healthTargets { metrics.destinationUp(target.url).record(1) }
        let checker = HealthChecker(board: board, settings: gateway.config.healthChecks, logger: logger, clock: clock) {
            [weak self] target, up in
            self?.changed(target, up: up)
        }
        checker.start()
        self.checker = checker
    }

    /// On the checker's thread, after a destination went down or came up.
    private func changed(_ target: HealthTarget, up: Bool) {
        metrics.destinationUp(target.url).record(up ? 1 : 0)
        noteHealth(target.url, up, clock.nowMs())
        reportSetsAllDown(gateway())
    }

    /// Logs each destination set that has come to have no destination up, or has one again.
    private func reportSetsAllDown(_ gateway: Gateway) {
        let down = gateway.setsWithEveryDestinationDown(atMs: clock.nowMs())
        let names = Set(down.map(\.name))
        setsAllDown.withLock { logged in
            for (name, instead) in down where !logged.contains(name) {
                logger.error(
                    "every destination of a link is down; redirecting to a fallback", metadata: ["set": "\(name)", "instead": "\(instead)"])
            }
            for name in logged.subtracting(names) {
                logger.notice("a destination of a link is up again", metadata: ["set": "\(name)"])
            }
            logged = names
        }
    }
}

extension HealthWatch: ServerPart {
    var partName: String { "the health checks" }
}
