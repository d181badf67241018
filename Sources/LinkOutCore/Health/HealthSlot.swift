import Synchronization

/// One target's state as the event loops see it: written by the health checker's thread, read on every
/// request that chooses among the target's destinations.
///
/// Two atomics and no lock, so a loop thread never waits on the checker. The two are stored separately;
/// a reader may see a new `isUp` with the previous `lastUpMs` for an instant, which only matters to the
/// least-bad choice when everything is down, and there by one check interval at most.
public final class HealthSlot: Sendable {
    private let up: Atomic<Bool>
    private let lastUp: Atomic<Int64>

    /// A new slot is up (optimistic) and never seen up by a check.
    public init(isUp: Bool = true, lastUpMs: Int64 = 0) {
        up = Atomic(isUp)
        lastUp = Atomic(lastUpMs)
    }

    /// Whether the target counts as healthy.
    public var isUp: Bool { up.load(ordering: .acquiring) }

    /// Wall-clock milliseconds of the last successful check, 0 if never: when every destination of a link
    /// is down, the one seen up most recently is the least bad.
    public var lastUpMs: Int64 { lastUp.load(ordering: .acquiring) }

    /// Called by the checker after each result.
    public func update(isUp: Bool, lastUpMs: Int64) {
        lastUp.store(lastUpMs, ordering: .releasing)
        up.store(isUp, ordering: .releasing)
    }
}
