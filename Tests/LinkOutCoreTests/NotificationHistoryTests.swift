import LinkOutCore
import Testing

/// The span, request and pages of Apple's notification history, as pure functions.
struct NotificationHistoryRulesTests {
    static let day: Int64 = 86_400_000
    static let now: Int64 = 1_800_000_000_000

    @Test func theFirstReadReachesItsLookBackAndLaterOnesStartWhereTheLastEndedLessAnHour() {
        #expect(
            NotificationHistory.span(coveredUntil: nil, now: Self.now, firstLookBackDays: 30, environment: .production)
                == (Self.now - 30 * Self.day)..<Self.now)
        let covered = Self.now - 2 * Self.day
        #expect(
            NotificationHistory.span(coveredUntil: covered, now: Self.now, firstLookBackDays: 30, environment: .production)
                == (covered - NotificationHistory.overlapMs)..<Self.now)
    }

    @Test func neverFurtherBackThanAppleKeepsLessAnHour() {
        // A store last read a year ago: production keeps 180 days, the sandbox 30; the start stays an hour
        // inside, so that it is not past Apple's edge by the time Apple reads it.
        let yearAgo = Self.now - 365 * Self.day
        #expect(
            NotificationHistory.span(coveredUntil: yearAgo, now: Self.now, firstLookBackDays: 30, environment: .production).lowerBound
                == Self.now - 180 * Self.day + NotificationHistory.keptMarginMs)
        #expect(
            NotificationHistory.span(coveredUntil: nil, now: Self.now, firstLookBackDays: 30, environment: .sandbox).lowerBound
                == Self.now - 30 * Self.day + NotificationHistory.keptMarginMs)
    }

    @Test func aMarkAheadOfThisClockAsksForNothingAndNeverTraps() {
        // A clock stepped back, or another instance's clock ahead: an empty span, not a range that traps.
        let span = NotificationHistory.span(
            coveredUntil: Self.now + 5 * Self.day, now: Self.now, firstLookBackDays: 30, environment: .production)
        #expect(span.isEmpty && span.upperBound == Self.now)
    }

    @Test func theRequestNamesTheSpanAndTheType() {
        #expect(
            NotificationHistory.requestBody(1000..<2000)
                == #"{"startDate":1000,"endDate":2000,"notificationType":"EXTERNAL_PURCHASE_TOKEN"}"#)
    }

    @Test func aPageGivesItsSignedPayloadsAndWhereTheNextIs() throws {
        let body =
            #"{"hasMore":true,"paginationToken":"abc","notificationHistory":[{"signedPayload":"a.b.c","sendAttempts":[]},{"sendAttempts":[]},{"signedPayload":"d.e.f"}]}"#
        let page = try #require(NotificationHistory.parsePage(Array(body.utf8)))
        #expect(page.signedPayloads == ["a.b.c", "d.e.f"] && page.hasMore && page.paginationToken == "abc")
        // More without a token to ask with is read as it is: the fetcher fails rather than call it the last page.
        let stuck = try #require(NotificationHistory.parsePage(Array(#"{"hasMore":true,"notificationHistory":[]}"#.utf8)))
        #expect(stuck.hasMore && stuck.paginationToken == nil)
        // Not Apple's shape: no page at all (a fetch that fails), not an empty one (a span marked read).
        #expect(NotificationHistory.parsePage(Array("<html>".utf8)) == nil)
        #expect(NotificationHistory.parsePage(Array("{}".utf8)) == nil)
    }

    @Test func aRecordBecomesTheBodyOfAPushedNotification() {
        #expect(NotificationHistory.notificationBody("a.b.c") == Array(#"{"signedPayload":"a.b.c"}"#.utf8))
    }
}

/// Month close and Apple's history: a month is only closed for good once the history was read past its
/// tokens' day-10 notices, since a token linkout never saw reaches it only that way.
struct MonthCloseHistoryTests {
    @Test func aMonthIsCoveredOnceTheHistoryIsReadTenDaysPastItsEnd() throws {
        let november = try #require(UTCMonth("2026-11"))
        let tenDays: Int64 = 10 * 86_400_000
        #expect(!MonthClose.historyCovers(november, historyReadUntil: november.end))
        #expect(!MonthClose.historyCovers(november, historyReadUntil: november.end + tenDays - 1))
        #expect(MonthClose.historyCovers(november, historyReadUntil: november.end + tenDays))
        #expect(!MonthClose.historyCovers(november, historyReadUntil: 0), "never read")
    }
}
