import Foundation
import LinkOutTestSupport
import Testing

/// Apple's notification history read back: a notification Apple gave up sending while linkout was down is
/// fetched at the next start, taken once (as a pushed one would be), and acted on. The stand-in checks each
/// request with Apple's own library (its NotificationHistoryRequest model) and answers in pages.
@Suite(.serialized) struct NotificationHistoryTests {
    static let hour: Int64 = 3_600_000

    /// Waits until `condition` holds or `timeout` passes.
    private func wait(_ timeout: TimeInterval = 10, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return try condition()
    }

    @Test func aNotificationMissedWhileLinkoutWasDownIsFetchedAtStartAndActedOnOnce() throws {
        let fixture = try ReportingFixture(notifications: true)
        let signer = try NotificationSigner.shared()
        let now = TokenBuilder.nowMs
        // Sent while linkout was down, and given up by Apple: a token linkout never saw, and two of a custom
        // link's life; one more, older than the first fetch reaches, is never asked for.
        let unseen = "never-seen-" + UUID().uuidString.lowercased()
        let unreported = signer.sign(
            NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: unseen, signedDate: now - 2 * Self.hour))
        let created = signer.sign(
            NotificationSigner.payload(
                subtype: "CREATED", externalPurchaseId: UUID().uuidString.lowercased(), created: now - 3 * Self.hour,
                signedDate: now - 3 * Self.hour, tokenType: "ACQUISITION", expiration: now + 30 * 24 * Self.hour))
        let tooOld = signer.sign(
            NotificationSigner.payload(
                subtype: "UNREPORTED", externalPurchaseId: "too-old-" + UUID().uuidString.lowercased(),
                signedDate: now - 40 * 24 * Self.hour))
        for (jws, signed) in [(unreported, now - 2 * Self.hour), (created, now - 3 * Self.hour), (tooOld, now - 40 * 24 * Self.hour)] {
            try fixture.production.addToHistory(jws, signedDate: signed)
        }
        // One record a page, so linkout must follow the pagination tokens.
        try fixture.production.setHistory(pageSize: 1)

        let server = try fixture.serve()
        let accepted = try fixture.production.waitForAccepted(count: 1)
        #expect(accepted.first?["externalPurchaseId"] as? String == unseen)
        #expect(accepted.first?["status"] as? String == "UNRECOGNIZED_TOKEN")
        #expect(try wait { server.log.contains("Apple's notification history held notifications linkout had not taken") }, "\(server.log)")
        server.stop()

        let requests = try fixture.production.historyRequests()
        #expect(
            !requests.isEmpty && requests.allSatisfy { ($0["problems"] as? [Any])?.isEmpty == true && $0["answer"] as? Int == 200 },
            "\(requests)")
        #expect(requests.count == 2, "two records in the span, one a page: \(requests)")
        #expect(requests.allSatisfy { $0["bid"] as? String == "com.example" })
        let body = try #require(requests.first?["body"] as? [String: Any])
        #expect(body["notificationType"] as? String == "EXTERNAL_PURCHASE_TOKEN")
        let start = try #require(body["startDate"] as? Int64 ?? (body["startDate"] as? Int).map(Int64.init))
        // The first fetch reaches notifications.historyFirstLookBackDays (30) back, not Apple's 180.
        #expect(abs(start - (now - 30 * 24 * Self.hour)) < Self.hour, "\(body)")
        #expect((requests.last?["query"] as? String)?.hasPrefix("paginationToken=") == true)

        let status = try fixture.status()
        let counts = (status["notifications"] as? [String: Any])?["counts"] as? [[String: Any]] ?? []
        let outcomes = Set(counts.compactMap { $0["outcome"] as? String })
        #expect(outcomes == ["unrecognized", "token_recorded"], "\(status["notifications"] ?? "")")
        // Month close says of each month whether the history was read past its tokens' day-10 notices:
        // read up to now, no month of these recent tokens is covered yet.
        let months = status["monthClose"] as? [[String: Any]] ?? []
        #expect(!months.isEmpty && months.allSatisfy { $0["historyCovers"] as? Bool == false }, "\(months)")

        // A restart reads from where the last fetch ended (less an hour): the same notifications are taken
        // once, and nothing more is sent to Apple.
        let again = try fixture.serve()
        #expect(try wait { try fixture.production.historyRequests().count > requests.count })
        #expect(try wait { again.log.contains("Apple's notification history read; nothing missed") }, "\(again.log)")
        again.stop()
        let second = try fixture.production.historyRequests().dropFirst(requests.count)
        let secondStart = (second.first?["body"] as? [String: Any])?["startDate"] as? Int ?? 0
        #expect(Int64(secondStart) > now - Self.hour - 60_000, "\(second)")
        #expect(try fixture.production.reports().count == 1)
    }

    @Test func aHistoryThatCannotBeReadIsSaidAndLeavesTheSpanForTheNextFetch() throws {
        let fixture = try ReportingFixture(notifications: true)
        try fixture.production.setHistory(failures: 5)
        let server = try fixture.serve()
        #expect(try wait { server.log.contains("cannot read Apple's notification history") }, "\(server.log)")
        server.stop()
        #expect(server.log.contains("HTTP 500"), "\(server.log)")
        // Nothing marked covered: report status says the production history was never read.
        let status = try LinkoutBinary.run(["report", "status", "--config", fixture.configPath])
        #expect(status.stdout.contains("Apple's notification history"), "\(status.stdout)")
        #expect(status.stdout.contains("com.example production: never read"), "\(status.stdout)")
    }

    @Test func historyOffIsSaidAtStartUp() throws {
        let fixture = try ReportingFixture(notifications: true, notificationSettings: #""history": false,"#)
        let server = try fixture.serve()
        #expect(try wait { server.log.contains("notifications.history is false") }, "\(server.log)")
        server.stop()
        #expect(try fixture.production.historyRequests().isEmpty)
    }
}
