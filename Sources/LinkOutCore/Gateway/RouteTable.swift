/// The routes by path, found from the request's own bytes. Paths are matched byte for byte
/// (`LinkPathRules`), so a request's path needs no `String`: making one, hashing it with SipHash and
/// comparing it as Unicode cost about 1,600 instructions a request; this is a few dozen.
struct RouteTable: Sendable {
    /// Every route, in config order.
    let all: [Route]
    /// Open addressing with linear probing, at most half full: positions in `all`, -1 for an empty slot.
    private let slots: [Int]
    private let paths: [[UInt8]]

    /// A path given twice keeps its later link, as assigning into a dictionary would.
    init(_ routes: [Route]) {
        let kept = Dictionary(routes.map { ($0.link.path, $0) }, uniquingKeysWith: { _, later in later })
            .values.sorted { $0.index < $1.index }
        var capacity = 4
        while capacity < kept.count * 2 { capacity *= 2 }
        var slots = [Int](repeating: -1, count: capacity)
        let paths = kept.map { Array($0.link.path.utf8) }
        for (position, path) in paths.enumerated() {
            var slot = path.withUnsafeBytes { Self.firstSlot($0, mask: capacity - 1) }
            while slots[slot] >= 0 { slot = (slot + 1) & (capacity - 1) }
            slots[slot] = position
        }
        self.all = kept
        self.slots = slots
        self.paths = paths
    }

    /// The route for a request's path, nil when no link serves it.
    subscript(path: UnsafeRawBufferPointer) -> Route? {
        let mask = slots.count - 1
        var slot = Self.firstSlot(path, mask: mask)
        while true {
            let position = slots[slot]
            if position < 0 { return nil }
            if paths[position].withUnsafeBytes({ $0.equals(path) }) { return all[position] }
            slot = (slot + 1) & mask
        }
    }

    private static func firstSlot(_ path: UnsafeRawBufferPointer, mask: Int) -> Int {
        Int(truncatingIfNeeded: StableHash.mix(StableHash.fnv1a(path))) & mask
    }
}
