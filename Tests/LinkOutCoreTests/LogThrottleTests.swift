import LinkOutCore
import Testing

/// Log lines about floods: one per key per interval, with the count left out, in bounded memory.
@Suite struct LogThrottleTests {
    @Test func oneLinePerKeyPerIntervalSayingHowManyWereLeftOut() {
        var throttle = LogThrottle(intervalMs: 60_000, maxKeys: 16)
        #expect(throttle.admit("bad_key 203.0.113.7", nowMs: 0) == .log(suppressed: 0))
        for second in 1...59 {
            #expect(throttle.admit("bad_key 203.0.113.7", nowMs: Int64(second) * 1000) == .suppress)
        }
        // Another key, or another client, has a line of its own.
        #expect(throttle.admit("bad_key 198.51.100.1", nowMs: 30_000) == .log(suppressed: 0))
        #expect(throttle.admit("rate_limited 203.0.113.7", nowMs: 30_000) == .log(suppressed: 0))
        // A minute after the first line, the next says how many it stands for.
        #expect(throttle.admit("bad_key 203.0.113.7", nowMs: 59_999) == .suppress)
        #expect(throttle.admit("bad_key 203.0.113.7", nowMs: 60_000) == .log(suppressed: 60))
        #expect(throttle.admit("bad_key 203.0.113.7", nowMs: 60_001) == .suppress)
    }

    @Test func aFloodOfNewKeysStaysBoundedAndIsStillSaid() {
        var throttle = LogThrottle(intervalMs: 60_000, maxKeys: 4)
        var lines = 0
        var overflowed = 0
        for client in 0..<10_000 {
            switch throttle.admit("bad_key 10.0.\(client / 256).\(client % 256)", nowMs: 1_000 + Int64(client / 100)) {
            case .log: lines += 1
            case .logOverflow(let count):
                overflowed += count
                lines += 1
            case .suppress: break
            }
            #expect(throttle.keyCount <= 4)
        }
        // Four keys logged, then one line for the rest, within the minute.
        #expect(lines == 5)
        #expect(overflowed == 1)
        // A minute on, the table makes room again (its keys' minutes are over); once it is full again, the
        // overflow line counts every event it left out since the last such line: 9,995 then, 1 now.
        #expect(throttle.admit("bad_key 192.0.2.1", nowMs: 200_000) == .log(suppressed: 0))
        for client in 0..<3 {
            #expect(throttle.admit("other \(client)", nowMs: 200_000) == .log(suppressed: 0))
        }
        #expect(throttle.admit("other 3", nowMs: 200_000) == .logOverflow(count: 9_996))
        #expect(throttle.admit("other 4", nowMs: 200_001) == .suppress)
    }
}
