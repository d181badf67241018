/// Says whether a log line about `key` (a refusal's reason and client, an unrouted path) is due: at most
/// one per key per interval, so a flood of the same refusal costs a counter increment, not a line each, and
/// the line that is written says how many were left out since the last one. Metrics count every event; the
/// log is for a human to see that it happens and from where.
///
/// Memory is bounded whatever the keys (a flood from rotating addresses makes a new key per request): at
/// most `maxKeys` are remembered. When the table is full of keys logged within the interval, a new key is
/// not logged on its own but counted as `overflowed`, and the next line that is due (`overflow` key) says
/// how many such events went unlogged, so the log grows by at most `maxKeys + 1` lines per interval.
///
/// A value with no clock and no lock: the caller passes the time and guards it (the server shares one
/// behind a lock between its threads).
public struct LogThrottle: Sendable {
    public let intervalMs: Int64
    public let maxKeys: Int

    private struct Entry {
        var loggedAtMs: Int64
        /// Events left out since that line.
        var suppressed: Int
    }

    private var entries: [String: Entry] = [:]
    /// Events not logged because the table was full, since the last overflow line.
    private var overflowed = 0
    private var overflowLoggedAtMs: Int64?
    /// When the full table was last swept: at most once a second, so that a flood of new keys against a
    /// full table costs a look-up each, not a sweep each.
    private var sweptAtMs: Int64?

    public init(intervalMs: Int64 = 60_000, maxKeys: Int = 1024) {
        precondition(intervalMs > 0 && maxKeys > 0)
        self.intervalMs = intervalMs
        self.maxKeys = maxKeys
    }

    /// What the caller should do about one event.
    public enum Verdict: Sendable, Equatable {
        /// Log it, adding that `suppressed` events of the same key were left out since the last line.
        case log(suppressed: Int)
        /// Log one line saying that `count` events of keys the table had no room for were left out (this
        /// one included), instead of a line about this key.
        case logOverflow(count: Int)
        /// Leave it out (counted for the next line).
        case suppress
    }

    /// The event of `key` at `nowMs`: whether a line is due.
    public mutating func admit(_ key: String, nowMs: Int64) -> Verdict {
        if var entry = entries[key] {
            if nowMs - entry.loggedAtMs < intervalMs {
                entry.suppressed += 1
                entries[key] = entry
                return .suppress
            }
            entries[key] = Entry(loggedAtMs: nowMs, suppressed: 0)
            return .log(suppressed: entry.suppressed)
        }
        if entries.count >= maxKeys, sweptAtMs.map({ nowMs - $0 >= 1000 }) ?? true {
            sweptAtMs = nowMs
            // Forget the keys whose interval is over: their next event logs again, which is what they are due.
            // (Their count of suppressed events is lost; the metrics still have every event.)
            entries = entries.filter { nowMs - $0.value.loggedAtMs < intervalMs }
        }
        guard entries.count < maxKeys else {
            overflowed += 1
            guard overflowLoggedAtMs.map({ nowMs - $0 >= intervalMs }) ?? true else { return .suppress }
            overflowLoggedAtMs = nowMs
            defer { overflowed = 0 }
            return .logOverflow(count: overflowed)
        }
        entries[key] = Entry(loggedAtMs: nowMs, suppressed: 0)
        return .log(suppressed: 0)
    }

    /// Keys remembered now (for tests).
    public var keyCount: Int { entries.count }
}
