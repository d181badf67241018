import LinkOutCore
import LinkOutStore
import Synchronization

/// Ready: not draining, the last commit did not fail, and nothing has waited on the store too long.
/// What `/readyz` answers, on the shoppers' listeners and the admin listener alike.
struct Readiness: Sendable {
    var ready: Bool
    /// Ready, but spooling a PostgreSQL outage: `X-Linkout-Degraded: spool`.
    var degraded = false
    var why: String

    var status: Int32 { ready ? 200 : 503 }

    /// What `/readyz` answers.
    var reply: Reply {
        ShopperReplies.text(
            Int(status), why + "\n", extra: degraded ? [ReplyHeader("X-Linkout-Degraded", "spool")] : [],
            access: ReplyAccess(route: "readyz", count: .health))
    }

    /// What `/healthz` answers: the process is up, whatever its readiness.
    static let healthReply = ShopperReplies.text(200, "ok\n", access: ReplyAccess(route: "healthz", count: .health))
}

/// Works out `Readiness` from the writer's state, the store's outage and whether the server drains.
final class ReadinessCheck: Sendable {
    /// Set on SIGTERM (and by `stop`): `/readyz` answers 503 from then on.
    let draining = Atomic<Bool>(false)
    private let writerStatus: @Sendable () -> WriterHealth
    private let outage: (any StoreOutageReporting)?
    private let clock: TimeSource
    /// How long the oldest queued visit may wait before `/readyz` calls the store stuck.
    static let stuckAfterNanoseconds: UInt64 = 5_000_000_000

    /// What readiness reads of the writer's state (`RecordWriter.Status`).
    struct WriterHealth {
        /// The last commit failed.
        var failing: Bool
        /// When the oldest visit waiting was queued, on the clock's monotonic side; 0: none waits.
        var oldestPendingSince: UInt64
    }

    init(writerStatus: @escaping @Sendable () -> WriterHealth, outage: (any StoreOutageReporting)?, clock: TimeSource) {
        self.writerStatus = writerStatus
        self.outage = outage
        self.clock = clock
    }

    func drain() { draining.store(true, ordering: .sequentiallyConsistent) }

    func current() -> Readiness {
        if draining.load(ordering: .relaxed) { return Readiness(ready: false, why: "draining") }
        let status = writerStatus()
        if status.failing { return Readiness(ready: false, why: "store failing") }
        // Spooling still records every visit durably: stay in rotation, and say so for monitoring.
        if let outage = outage?.outageStatus, outage.degraded {
            let what = outage.spooling ? "spooling" : "replaying spool"
            return Readiness(ready: true, degraded: true, why: "degraded: \(what) (\(outage.spooledVisits) visits waiting)")
        }
        if status.oldestPendingSince != 0, clock.monotonicNanoseconds() &- status.oldestPendingSince > Self.stuckAfterNanoseconds {
            return Readiness(ready: false, why: "store stalled")
        }
        return Readiness(ready: true, why: "ready")
    }
}
