import Foundation
import LinkOutTestSupport
import Testing

/// Reports Apple refused are never stuck for good: a no-purchase report (nothing in it to correct) is sent
/// again on its own, and any refused report is sent again at once by `linkout report retry`, each with the
/// same requestIdentifier (Apple took nothing of it). On SQLite and on PostgreSQL.
@Suite(.serialized) struct RefusedReportTests {
    enum Store: CaseIterable { case sqlite, postgres }

    private func fixture(_ store: Store, reporting: String = "") throws -> ReportingFixture {
        switch store {
        case .sqlite:
            return try ReportingFixture(reporting: reporting)
        case .postgres:
            let url = try PostgresServer.createDatabase()
            let migrate = try LinkoutBinary.run(["store", "migrate", "--store", url])
            try #require(migrate.status == 0, "\(migrate.stderr)")
            return try ReportingFixture(reporting: reporting, store: url)
        }
    }

    private func refused(_ fixture: ReportingFixture) throws -> [[String: Any]] {
        try fixture.status()["failed"] as? [[String: Any]] ?? []
    }

    @Test(arguments: Store.allCases)
    func aRefusedNoPurchaseReportIsSentAgainOnItsOwnWithTheSameRequestIdentifier(_ store: Store) throws {
        let fixture = try fixture(store, reporting: #""refusedRetrySeconds": 4,"#)
        let server = try fixture.serve(reporting: false)
        let id = try fixture.linkOut(server)
        server.stop()
        try fixture.production.setMode(.error400)
        let first = try fixture.report()
        #expect(first.stdout.contains("1 failed"), "\(first.stdout) \(first.stderr)")
        #expect(first.stderr.contains("sent again on its own"), "\(first.stderr)")
        let listed = try refused(fixture)
        #expect(listed.map { $0["externalPurchaseId"] as? String } == [id])
        let retryAt = try #require(listed.first?["retryAt"] as? Int, "\(listed)")
        #expect(listed.first?["refusals"] as? Int == 1)
        let month = try #require(listed.first?["month"] as? String)
        let text = try LinkoutBinary.run(["report", "status", "--config", fixture.configPath])
        #expect(text.stdout.contains("reports Apple refused"), "\(text.stdout)")
        #expect(text.stdout.contains("months \(month) open"), "\(text.stdout)")
        #expect(text.stdout.contains("linkout report retry --all"), "\(text.stdout)")

        // Before its time nothing is sent (when this round still is before it); after it, the same report
        // goes again and is taken.
        let early = Int(Date().timeIntervalSince1970 * 1000) < retryAt - 500
        try fixture.report()
        if early { #expect(try fixture.production.reports().count == 1) }
        let wait = Double(retryAt - Int(Date().timeIntervalSince1970 * 1000)) / 1000 + 0.2
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        let second = try fixture.report()
        #expect(second.stdout.contains("1 accepted"), "\(second.stdout) \(second.stderr)")
        let sent = try fixture.production.reports()
        #expect(sent.map { $0["answer"] as? Int } == [400, 200])
        #expect(Set(sent.compactMap { $0["requestIdentifier"] as? String }).count == 1)
        #expect(try refused(fixture).isEmpty)
        #expect(try fixture.statusRow()["reported"] as? Int == 1)
    }

    @Test(arguments: Store.allCases)
    func aRefusedLineItemReportWaitsForAnOperatorAndReportRetrySendsIt(_ store: Store) throws {
        let fixture = try fixture(store)
        let server = try fixture.serve(reporting: false)
        let id = try fixture.linkOut(server, ageDays: 0)
        let posted = try fixture.post(server, ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy("order-1")]])
        #expect(posted.status == 200, "\(posted.json)")
        server.stop()
        // The stand-in's 400 names the line item: the body's fault, so never sent again on its own.
        try fixture.production.setMode(.error400)
        let first = try fixture.report()
        #expect(first.stdout.contains("1 failed"), "\(first.stdout) \(first.stderr)")
        let listed = try refused(fixture)
        #expect(listed.first?["status"] as? String == "LINE_ITEM")
        #expect(listed.first?["retryAt"] is NSNull, "\(listed)")
        let request = try #require(listed.first?["requestIdentifier"] as? String)

        // A request identifier that is no refused report: said, and nothing sent.
        let wrong = try LinkoutBinary.run(["report", "retry", "00000000-0000-4000-8000-000000000000", "--config", fixture.configPath])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("not a refused report"), "\(wrong.stderr)")
        let none = try LinkoutBinary.run(["report", "retry", "--config", fixture.configPath])
        #expect(none.status != 0)
        #expect(none.stderr.contains("--all"), "\(none.stderr)")
        #expect(try fixture.production.reports().count == 1)

        let retry = try LinkoutBinary.run(["report", "retry", request, "--config", fixture.configPath])
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(retry.stdout.contains("refused reports sent again: 1"), "\(retry.stdout)")
        #expect(retry.stdout.contains("1 accepted"), "\(retry.stdout) \(retry.stderr)")
        let sent = try fixture.production.reports()
        #expect(sent.map { $0["answer"] as? Int } == [400, 200])
        #expect(sent.compactMap { $0["requestIdentifier"] as? String } == [request, request])
        #expect(try refused(fixture).isEmpty)
        // Nothing left to retry: a second retry sends nothing.
        let again = try LinkoutBinary.run(["report", "retry", "--all", "--config", fixture.configPath])
        #expect(again.stdout.contains("refused reports sent again: 0"), "\(again.stdout)")
        #expect(try fixture.production.reports().count == 2)
    }

    @Test func reportRetryByMonthTakesOnlyThatMonthsTokens() throws {
        let fixture = try fixture(.sqlite, reporting: #""refusedRetries": 0,"#)
        let server = try fixture.serve(reporting: false)
        // Two tokens in different months (UTC): one created 40 days ago, one 4 days ago.
        let old = try fixture.linkOut(server, ageDays: 40)
        let recent = try fixture.linkOut(server, ageDays: 4)
        server.stop()
        try fixture.production.setMode(.error400, count: 2)
        try fixture.report()
        let listed = try refused(fixture)
        #expect(Set(listed.compactMap { $0["externalPurchaseId"] as? String }) == [old, recent])
        // refusedRetries 0: none is sent again on its own.
        #expect(listed.allSatisfy { $0["retryAt"] is NSNull }, "\(listed)")
        let oldMonth = try #require(listed.first { $0["externalPurchaseId"] as? String == old }?["month"] as? String)
        let recentMonth = try #require(listed.first { $0["externalPurchaseId"] as? String == recent }?["month"] as? String)
        try #require(oldMonth != recentMonth)

        let retry = try LinkoutBinary.run(["report", "retry", "--month", oldMonth, "--config", fixture.configPath])
        #expect(retry.stdout.contains("refused reports sent again: 1"), "\(retry.stdout) \(retry.stderr)")
        #expect(try fixture.production.accepted().map { $0["externalPurchaseId"] as? String } == [old])
        #expect(try refused(fixture).map { $0["externalPurchaseId"] as? String } == [recent])
        let bad = try LinkoutBinary.run(["report", "retry", "--month", "2026-13", "--config", fixture.configPath])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--month must be a month"), "\(bad.stderr)")
    }

    @Test func serveSaysAtStartUpWhichRefusedReportsHoldMonthsOpen() throws {
        let fixture = try fixture(.sqlite, reporting: #""refusedRetries": 0,"#)
        let recorder = try fixture.serve(reporting: false)
        try fixture.linkOut(recorder)
        recorder.stop()
        try fixture.production.setMode(.error400)
        try fixture.report()
        let month = try #require(try refused(fixture).first?["month"] as? String)
        let server = try fixture.serve()
        let deadline = Date().addingTimeInterval(5)
        while !server.log.contains("Apple refused"), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        server.stop()
        #expect(
            server.log.contains("1 report(s) Apple refused hold their tokens unreported and keep month(s) \(month) open"), "\(server.log)")
        #expect(server.log.contains("linkout report retry --all"), "\(server.log)")
    }
}
