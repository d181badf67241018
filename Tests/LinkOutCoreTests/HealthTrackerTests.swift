import Testing

@testable import LinkOutCore

@Suite("destination health: thresholds, origins, the board")
struct HealthTrackerTests {
    // MARK: Thresholds

    @Test func startsUpAndGoesDownAfterExactlyDownAfterFailures() {
        var tracker = HealthTracker(downAfter: 3, upAfter: 2)
        #expect(tracker.isUp, "optimistic: up before any check")
        #expect(tracker.record(success: false) == nil)
        #expect(tracker.record(success: false) == nil)
        #expect(tracker.isUp)
        #expect(tracker.record(success: false) == .wentDown)
        #expect(!tracker.isUp)
        #expect(tracker.record(success: false) == nil, "no second transition while it stays down")
    }

    @Test func comesUpAfterExactlyUpAfterSuccesses() {
        var tracker = HealthTracker(downAfter: 1, upAfter: 2)
        #expect(tracker.record(success: false) == .wentDown)
        #expect(tracker.record(success: true) == nil)
        #expect(!tracker.isUp)
        #expect(tracker.record(success: true) == .cameUp)
        #expect(tracker.isUp)
        #expect(tracker.record(success: true) == nil)
    }

    @Test func flappingNeverCrossesAThreshold() {
        // Alternating results: never 3 failures or 2 successes in a row, so the state never moves.
        var up = HealthTracker(downAfter: 3, upAfter: 2)
        for index in 0..<100 {
            #expect(up.record(success: index % 3 == 2) == nil)
        }
        #expect(up.isUp)

        var down = HealthTracker(downAfter: 1, upAfter: 2)
        _ = down.record(success: false)
        for index in 0..<100 {
            #expect(down.record(success: index.isMultiple(of: 2)) == nil)
        }
        #expect(!down.isUp, "one success between failures is not enough to come back")
    }

    @Test func aResultThatAgreesResetsTheStreak() {
        var tracker = HealthTracker(downAfter: 2, upAfter: 2)
        _ = tracker.record(success: false)
        #expect(tracker.streak == 1)
        _ = tracker.record(success: true)
        #expect(tracker.streak == 0)
        #expect(tracker.record(success: false) == nil)
        #expect(tracker.record(success: false) == .wentDown)
    }

    @Test func thresholdsBelowOneMeanOne() {
        var tracker = HealthTracker(downAfter: 0, upAfter: -5)
        #expect(tracker.downAfter == 1 && tracker.upAfter == 1)
        #expect(tracker.record(success: false) == .wentDown)
        #expect(tracker.record(success: true) == .cameUp)
        tracker.downAfter = 0
        #expect(tracker.downAfter == 1)
    }

    @Test func changedThresholdsKeepTheStreak() {
        var tracker = HealthTracker(downAfter: 5, upAfter: 2)
        _ = tracker.record(success: false)
        _ = tracker.record(success: false)
        // A reload lowers the threshold: the next failure is the third in a row.
        tracker.downAfter = 3
        #expect(tracker.record(success: false) == .wentDown)
    }

    // MARK: Origins

    @Test(arguments: [
        ("https://checkout.example.com/nl?plan=annual#top", "https://checkout.example.com/"),
        ("https://checkout.example.com", "https://checkout.example.com/"),
        ("https://checkout.example.com?x=1", "https://checkout.example.com/"),
        ("https://checkout.example.com#frag", "https://checkout.example.com/"),
        ("https://checkout.example.com:8443/pay", "https://checkout.example.com:8443/"),
        ("https://checkout.example.com:443/pay", "https://checkout.example.com/"),
        ("http://127.0.0.1:8080/x/y", "http://127.0.0.1:8080/"),
        ("http://127.0.0.1:80/x", "http://127.0.0.1/"),
        ("http://127.0.0.1:443/x", "http://127.0.0.1:443/"),
        ("HTTPS://Checkout.Example.COM/Path", "https://checkout.example.com/"),
        ("https://user:secret@checkout.example.com/pay", "https://checkout.example.com/"),
        ("https://user:p@ss@checkout.example.com:9000/pay", "https://checkout.example.com:9000/"),
        ("https://[2001:db8::1]:8443/pay", "https://[2001:db8::1]:8443/"),
        ("https://[2001:DB8::1]/pay", "https://[2001:db8::1]/"),
        ("https://shop.example.com:08443/", "https://shop.example.com:8443/"),
        ("https://shop.example.com:/", "https://shop.example.com/"),  // RFC 3986: an empty port is the default
    ])
    func originOfADestination(url: String, origin: String) {
        #expect(HealthTarget.origin(of: url) == HealthTarget(url: origin, method: .head))
    }

    @Test(arguments: [
        "", "checkout.example.com/nl", "/nl", "ftp://example.com/", "mailto:a@example.com", "https://",
        "https:///path", "https://example.com:0/", "https://example.com:65536/",
        "https://example.com:80a/", "https://[2001:db8::1/", "https://[2001:db8::1]x/", "https://[]/",
        "https://a b.example.com/", "https://user@/", "https:example.com",
    ])
    func notAnOrigin(url: String) {
        #expect(HealthTarget.origin(of: url) == nil)
    }

    @Test func destinationsOnOneOriginShareATarget() {
        let first = HealthTarget.origin(of: "https://pay.example.com/nl")
        let second = HealthTarget.origin(of: "https://pay.example.com:443/de?x=1")
        #expect(first == second)
        #expect(first != HealthTarget(url: "https://pay.example.com/", method: .get), "the method is part of a target")
    }

    // MARK: Slots and the board

    @Test func slotStartsUpAndNeverSeenUp() {
        let slot = HealthSlot()
        #expect(slot.isUp)
        #expect(slot.lastUpMs == 0)
        slot.update(isUp: false, lastUpMs: 1_700_000_000_000)
        #expect(!slot.isUp)
        #expect(slot.lastUpMs == 1_700_000_000_000)
    }

    @Test func boardGivesTheSameSlotForTheSameTarget() throws {
        let board = DestinationHealthBoard()
        let origin = try #require(HealthTarget.origin(of: "https://pay.example.com/nl"))
        let health = HealthTarget(url: "https://pay.example.com/health", method: .get)
        let first = board.slot(for: origin)
        #expect(board.slot(for: origin) === first)
        #expect(board.slot(for: try #require(HealthTarget.origin(of: "https://PAY.example.com/de"))) === first)
        #expect(board.slot(for: health) !== first)
        #expect(board.count == 2)
        #expect(board.targets().map(\.0) == [origin, health], "sorted by URL")
    }

    @Test func retainKeepsStateOfUnchangedTargetsAndForgetsTheRest() {
        let board = DestinationHealthBoard()
        let kept = HealthTarget(url: "https://a.example.com/", method: .head)
        let dropped = HealthTarget(url: "https://b.example.com/", method: .head)
        let keptSlot = board.slot(for: kept)
        let droppedSlot = board.slot(for: dropped)
        keptSlot.update(isUp: false, lastUpMs: 42)
        droppedSlot.update(isUp: false, lastUpMs: 43)

        // A reload that still names `kept`.
        board.retain(only: [kept])
        #expect(board.slot(for: kept) === keptSlot)
        #expect(!board.slot(for: kept).isUp, "a reload does not bring a down destination back")
        #expect(board.targets().map(\.0) == [kept])

        // `dropped` named again by a later reload: a fresh, optimistic slot.
        let again = board.slot(for: dropped)
        #expect(again !== droppedSlot)
        #expect(again.isUp && again.lastUpMs == 0)

        board.retain(only: [])
        #expect(board.targets().isEmpty)
    }
}
