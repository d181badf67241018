import Testing
import LinkOutCore

/// The span, request and pages of Apple's notification history, as pure functions.
struct NotificationHistoryRulesTests {
    static let day: Int64 = 86_400_000
    static let now: Int64 = 1_800_000_000_000

    @Test func theFirstReadReachesItsLookBackAndLaterOnesStartWhereTheLastEndedLessAnHour() {
        #expect(NotificationHistory.span(coveredUntil: nil, now: Self.now, firstLookBackDays: 30, environment: .production)
                == (Self.now - 30 * Self.day)..<Self.now)
        let covered = Self.now - 2 * Self.day
        #expect(NotificationHistory.span(coveredUntil: covered, now: Self.now, firstLookBackDays: 30, environment: .production)
                == (covered - NotificationHistory.overlapMs)..<Self.now)
    }

    @Test func neverFurtherBackThanAppleKeeps() {
        // A store last read a year ago: production keeps 180 days, the sandbox 30.
        let yearAgo = Self.now - 365 * Self.day
        #expect(NotificationHistory.span(coveredUntil: yearAgo, now: Self.now, firstLookBackDays: 30, environment: .production).lowerBound
                == Self.now - 180 * Self.day)
        #expect(NotificationHistory.span(coveredUntil: nil, now: Self.now, firstLookBackDays: 90, environment: .sandbox).lowerBound
                == Self.now - 30 * Self.day)
    }

    @Test func theRequestNamesTheSpanAndTheType() {
        #expect(NotificationHistory.requestBody(1000..<2000) == #"{"startDate":1000,"endDate":2000,"notificationType":"EXTERNAL_PURCHASE_TOKEN"}"#)
    }

    @Test func aPageGivesItsSignedPayloadsAndWhereTheNextIs() throws {
        let body = #"{"hasMore":true,"paginationToken":"abc","notificationHistory":[{"signedPayload":"a.b.c","sendAttempts":[]},{"sendAttempts":[]},{"signedPayload":"d.e.f"}]}"#
        let page = try #require(NotificationHistory.parsePage(Array(body.utf8)))
        #expect(page.signedPayloads == ["a.b.c", "d.e.f"] && page.hasMore && page.paginationToken == "abc")
        // More without a token to ask with is the last page, not an endless loop.
        let stuck = try #require(NotificationHistory.parsePage(Array(#"{"hasMore":true,"notificationHistory":[]}"#.utf8)))
        #expect(!stuck.hasMore)
        #expect(NotificationHistory.parsePage(Array("<html>".utf8)) == nil)
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
