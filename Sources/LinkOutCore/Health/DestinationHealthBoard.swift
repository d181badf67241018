import Synchronization

/// Every target the config asks to be checked, each with its slot. One board lives for the whole process
/// and outlives config reloads: a reload asks for its targets again and gets the same slots for the ones it
/// still names, so a destination that was down stays down (and one that was up stays up) across a reload.
///
/// The map is behind a `Mutex`; only the config loader and the checker touch it, never a request, which
/// reads its `HealthSlot`s directly. (LinkOutCore imports no Foundation, hence `Mutex` over `NSLock`.)
public final class DestinationHealthBoard: Sendable {
    private let slots = Mutex<[HealthTarget: HealthSlot]>([:])

    public init() {}

    /// Registers (or finds) a target: the same slot for the same target, for as long as it is retained.
    public func slot(for target: HealthTarget) -> HealthSlot {
        slots.withLock { slots in
            if let slot = slots[target] { return slot }
            let slot = HealthSlot()
            slots[target] = slot
            return slot
        }
    }

    /// The targets to check now, with their slots, in a stable order (by URL, then method).
    public func targets() -> [(HealthTarget, HealthSlot)] {
        let all = slots.withLock { slots in slots.map { ($0.key, $0.value) } }
        return all.sorted { ($0.0.url, $0.0.method.rawValue) < ($1.0.url, $1.0.method.rawValue) }
    }

    /// After a reload: forgets the targets the new config no longer names. A target named again later
    /// starts afresh (up).
    public func retain(only targets: Set<HealthTarget>) {
        slots.withLock { slots in
            slots = slots.filter { targets.contains($0.key) }
        }
    }

    /// How many targets are registered.
    public var count: Int { slots.withLock { $0.count } }
}
