// TEMPORARY stub until the health branch lands. Not committed.
import Synchronization
public struct HealthCheckSettings: Sendable, Equatable {
    public var intervalMs: Int = 5_000
    public var timeoutMs: Int = 2_000
    public var downAfter: Int = 3
    public var upAfter: Int = 2
    public var caFile: String? = nil
    public init() {}
}
public struct HealthTarget: Hashable, Sendable {
    public enum Method: String, Sendable { case get = "GET", head = "HEAD" }
    public var url: String
    public var method: Method
    public init(url: String, method: Method) { self.url = url; self.method = method }
    public static func origin(of destinationURL: String) -> HealthTarget? {
        let rest = destinationURL.dropFirst(8)
        let end = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
        return HealthTarget(url: String(destinationURL[..<end]) + "/", method: .head)
    }
}
public final class HealthSlot: Sendable {
    private let up = Atomic<Bool>(true)
    private let last = Atomic<Int64>(0)
    public var isUp: Bool { up.load(ordering: .relaxed) }
    public var lastUpMs: Int64 { last.load(ordering: .relaxed) }
    public func update(isUp: Bool, lastUpMs: Int64) { up.store(isUp, ordering: .relaxed); last.store(lastUpMs, ordering: .relaxed) }
    public init() {}
}
public final class DestinationHealthBoard: Sendable {
    private let map = Mutex<[HealthTarget: HealthSlot]>([:])
    public init() {}
    public func slot(for target: HealthTarget) -> HealthSlot { map.withLock { if let s = $0[target] { return s }; let s = HealthSlot(); $0[target] = s; return s } }
    public func targets() -> [(HealthTarget, HealthSlot)] { map.withLock { $0.map { ($0.key, $0.value) } } }
    public func retain(only targets: Set<HealthTarget>) { map.withLock { $0 = $0.filter { targets.contains($0.key) } } }
}
