/// Per-client token buckets in a fixed-size table: memory is bounded whatever the number of distinct
/// addresses (a flood of spoofed or rotating addresses only evicts older buckets), and a look-up is a hash
/// and a compare. Not thread-safe: each event loop keeps its own, so a loop never takes a lock for it.
///
/// A client's connections are spread over the loops by the kernel (SO_REUSEPORT), so each loop allows
/// `rate / loops`: about `rate` in all for a client with several connections, and less for one that keeps
/// a single connection (its requests all reach one loop).
public struct RateLimiter: Sendable {
    public struct Policy: Sendable, Equatable {
        /// Sustained link-out requests per second per client.
        public var ratePerSecond: Double
        /// How many may come at once after a quiet spell.
        public var burst: Double

        public init(ratePerSecond: Double, burst: Double) {
            self.ratePerSecond = ratePerSecond
            self.burst = burst
        }
    }

    private struct Bucket {
        var key: UInt64 = 0
        var tokens: Double = 0
        var updatedMs: Int64 = 0
    }

    private let policy: Policy
    private var buckets: [Bucket]
    private let mask: Int

    /// - Parameter slots: a power of two; 65,536 slots take 1.5 MiB.
    public init(policy: Policy, slots: Int = 65_536) {
        precondition(slots > 0 && slots & (slots - 1) == 0, "slots must be a power of two")
        self.policy = policy
        self.buckets = [Bucket](repeating: Bucket(), count: slots)
        self.mask = slots - 1
    }

    /// This loop's share of `policy` when `loops` loops each keep their own (nil: no limit).
    public static func share(of policy: Policy?, loops: Int) -> RateLimiter? {
        guard let policy else { return nil }
        let share = Double(max(1, loops))
        return RateLimiter(policy: Policy(ratePerSecond: policy.ratePerSecond / share, burst: max(1, policy.burst / share)))
    }

    /// Takes a token for `client` at `atMs`; false when the client is over its rate. `atMs` is on the
    /// monotonic clock (`TimeSource.monotonicMilliseconds`): a bucket refills with the time elapsed, which a
    /// step of the wall clock (NTP, a VM resumed) would fake, freeing every client at once or none for hours.
    public mutating func allow(client: some Collection<UInt8>, atMs nowMs: Int64) -> Bool {
        // The destination chooser's hash; key 0 marks an empty slot, so a zero hash is bumped.
        let hash = StableHash.mix(StableHash.fnv1a(client)) | 1
        let slot = Int(truncatingIfNeeded: hash) & mask
        var bucket = buckets[slot]
        if bucket.key != hash {
            // A new client (or one that was evicted): starts with a full burst.
            bucket = Bucket(key: hash, tokens: policy.burst, updatedMs: nowMs)
        } else {
            let elapsed = Double(max(0, nowMs - bucket.updatedMs)) / 1000
            bucket.tokens = min(policy.burst, bucket.tokens + elapsed * policy.ratePerSecond)
            bucket.updatedMs = nowMs
        }
        let allowed = bucket.tokens >= 1
        if allowed { bucket.tokens -= 1 }
        buckets[slot] = bucket
        return allowed
    }
}
