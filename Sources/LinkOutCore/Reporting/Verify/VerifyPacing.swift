/// How fast `report verify` asks Apple, so that reading reports back never competes with sending them:
/// at most `perSecond` requests a second, and after a 429, a 5xx or no answer it waits (Apple's
/// `Retry-After` when given, else 1 s doubling with each failure in a row, at most a minute) before asking
/// again. A report that fails `triesPerReport` times in a row ends the run: Apple is not answering, and
/// going on would only wait longer. No clock of its own: the caller passes the time and sleeps.
public struct VerifyPacing: Sendable, Equatable {
    /// The rate `--rate` allows: at least one request every ten seconds, at most ten a second.
    public static let allowedRates: ClosedRange<Double> = 0.1...10
    public static let defaultPerSecond: Double = 2
    public static let triesPerReport = 4
    public static let firstBackoffMs: Int64 = 1000
    public static let maximumBackoffMs: Int64 = 60_000

    /// The least time between two requests.
    public let intervalMs: Int64
    /// Failures in a row (any report): what the backoff doubles with.
    public private(set) var failuresInRow = 0
    /// No request before this (ms on the caller's clock: `report verify` paces on the monotonic side).
    public private(set) var notBefore: Int64 = 0

    public init(perSecond: Double) {
        intervalMs = Int64((1000 / perSecond).rounded(.up))
    }

    /// How long to wait before the next request, from `now`.
    public func wait(now: Int64) -> Int64 { max(0, notBefore - now) }

    /// A request goes at `now`: the next one waits the interval.
    public mutating func asked(at now: Int64) {
        notBefore = max(notBefore, now + intervalMs)
    }

    /// Apple answered (anything but a retry): the backoff starts over.
    public mutating func answered() {
        failuresInRow = 0
    }

    /// Apple failed (429, 5xx, no answer): the next request waits `retryAfterMs` if Apple named it, else the
    /// backoff. Returns the wait.
    @discardableResult
    public mutating func failed(at now: Int64, retryAfterMs: Int64?) -> Int64 {
        failuresInRow += 1
        let backoff = min(ReportAnswer.backoff(failures: failuresInRow, first: Self.firstBackoffMs), Self.maximumBackoffMs)
        let wait = retryAfterMs ?? backoff
        notBefore = max(notBefore, now + wait)
        return wait
    }
}
