/// How many requests to Apple the reporter keeps in flight: adaptive, under `ceiling`
/// (`reporting.maxConcurrentRequests`). Apple publishes no rate limit, so it is found the way TCP finds a
/// path's: it starts low and grows while Apple answers promptly (by one per prompt answer until the first
/// sign of strain, then by about one per round trip), halves on a 429 or a 5xx (once per round trip, however
/// many answers of that round trip say so), and holds new sends for Apple's `Retry-After`. An answer that
/// comes much slower than the fastest seen (Apple queueing) stops the growth. No answer at all (a timeout,
/// a refused connection) counts as strain too.
///
/// Pure: the reporter tells it each answer and the time, and asks how many may be in flight.
public struct SendConcurrency: Sendable, Equatable {
    public let ceiling: Int
    /// Fractional so additive growth can be one per round trip: `limit` is its floor.
    private(set) var window: Double
    /// Growing by one per prompt answer until the first strain; then by 1/window.
    private(set) var slowStart = true
    /// The fastest answer seen (ms): "prompt" is within twice it plus 50 ms.
    private(set) var fastestMs: Int64?
    /// No decrease before this (Unix ms): the answers of one round trip are one signal.
    private var calmUntil: Int64 = 0
    /// No new send before this (Unix ms): Apple's Retry-After.
    public private(set) var holdUntil: Int64 = 0

    /// The longest Retry-After honoured as a hold of every send (beyond it the report's own backoff waits).
    public static let longestHoldMs: Int64 = 60_000
    public static let initial = 4

    public init(ceiling: Int) {
        self.ceiling = max(1, ceiling)
        window = Double(min(Self.initial, self.ceiling))
    }

    /// How many requests may be in flight now.
    public var limit: Int { max(1, min(ceiling, Int(window))) }

    /// Whether a new request may start at `now` with `inFlight` already out.
    public func mayStart(inFlight: Int, now: Int64) -> Bool { now >= holdUntil && inFlight < limit }

    /// What one answer said.
    public enum Signal: Sendable, Equatable {
        /// Any answer that is not Apple's strain (2xx, 4xx but 429), after `latencyMs`.
        case answered(latencyMs: Int64)
        /// 429 or 5xx; `retryAfterMs` when Apple said how long to wait.
        case strained(retryAfterMs: Int64?)
        /// No answer (timeout, connection refused or reset).
        case noAnswer
    }

    public mutating func record(_ signal: Signal, now: Int64) {
        switch signal {
        case .answered(let latency):
            fastestMs = min(fastestMs ?? latency, latency)
            let prompt = latency <= 2 * (fastestMs ?? latency) + 50
            guard prompt, Int(window) < ceiling else { return }
            window = min(Double(ceiling), window + (slowStart ? 1 : 1 / window))
        case .strained(let retryAfter):
            if let retryAfter, retryAfter > 0 { holdUntil = max(holdUntil, now + min(retryAfter, Self.longestHoldMs)) }
            decrease(now: now)
        case .noAnswer:
            decrease(now: now)
        }
    }

    private mutating func decrease(now: Int64) {
        slowStart = false
        guard now >= calmUntil else { return }
        window = max(1, window / 2)
        // One round trip (at least a second) before the next halving.
        calmUntil = now + max(1_000, 2 * (fastestMs ?? 500))
    }
}
