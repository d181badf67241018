import Foundation
import LinkOutTestSupport
import Testing

/// Reporting with several instances on one PostgreSQL database: they share the outbox, and each report
/// goes to Apple once.
@Suite(.serialized) struct ReportingPostgresTests {
    @Test func twoInstancesSendEachReportOnce() throws {
        let url = try PostgresServer.createDatabase()
        let migrate = try LinkoutBinary.run(["store", "migrate", "--store", url])
        try #require(migrate.status == 0, "\(migrate.stderr)")
        let fixture = try ReportingFixture(store: url)
        // Each send takes a while, so the two reporters' rounds overlap.
        try fixture.production.setLatency(ms: 30)
        let first = try fixture.serve()
        let second = try fixture.serve()
        var quiet: Set<String> = []
        var bought: Set<String> = []
        for index in 0..<30 {
            quiet.insert(try fixture.linkOut(index % 2 == 0 ? first : second, ageDays: 4))
        }
        for index in 0..<10 {
            let server = index % 2 == 0 ? first : second
            let id = try fixture.linkOut(server, ageDays: 0)
            // Lines for one token through the other instance's API.
            let answer = try fixture.post(
                index % 2 == 0 ? second : first, ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy("order-\(index)")]])
            #expect(answer.status == 200, "\(answer.json)")
            bought.insert(id)
        }
        let accepted = try fixture.production.waitForAccepted(count: 40, timeout: 30)
        Thread.sleep(forTimeInterval: 1)
        let sent = try fixture.production.reports()
        // Every PUT accepted: none sent twice (a duplicate), none at once with another for its token.
        #expect(sent.count == 40, "\(sent.filter { $0["accepted"] as? Bool != true }.map { $0["problems"] ?? "" })")
        #expect(
            Set(accepted.filter { $0["status"] as? String == "NO_LINE_ITEM" }.compactMap { $0["externalPurchaseId"] as? String }) == quiet)
        #expect(
            Set(accepted.filter { $0["status"] as? String == "LINE_ITEM" }.compactMap { $0["externalPurchaseId"] as? String }) == bought)
        first.stop()
        second.stop()
        #expect(try fixture.statusRow()["reported"] as? Int == 40)
    }

    /// Apple's retry may land on another instance: the notification is kept and acted on once.
    @Test func aNotificationRetriedOnAnotherInstanceHasOneEffect() throws {
        let url = try PostgresServer.createDatabase()
        let migrate = try LinkoutBinary.run(["store", "migrate", "--store", url])
        try #require(migrate.status == 0, "\(migrate.stderr)")
        let fixture = try ReportingFixture(store: url, notifications: true)
        let first = try fixture.serve()
        let second = try fixture.serve()
        let signer = try NotificationSigner.shared()
        let known = try fixture.linkOut(first, ageDays: 1)
        let unknown = "never-seen-" + UUID().uuidString.lowercased()
        for id in [known, unknown] {
            let jws = signer.sign(NotificationSigner.payload(subtype: "UNREPORTED", externalPurchaseId: id))
            let answers = [try fixture.notify(first, jws), try fixture.notify(second, jws)]
            #expect(answers.map(\.status) == [200, 200])
            #expect(answers.last?.answer == "duplicate")
        }
        let accepted = try fixture.production.waitForAccepted(count: 2)
        Thread.sleep(forTimeInterval: 1)
        first.stop()
        second.stop()
        #expect(try fixture.production.reports().count == 2)
        let statuses = Dictionary(
            uniqueKeysWithValues: accepted.map { ($0["externalPurchaseId"] as? String ?? "", $0["status"] as? String ?? "") })
        #expect(statuses == [known: "NO_LINE_ITEM", unknown: "UNRECOGNIZED_TOKEN"])
        #expect((try fixture.status()["notifications"] as? [String: Any])?["reminded"] as? Int == 1)
    }
}
