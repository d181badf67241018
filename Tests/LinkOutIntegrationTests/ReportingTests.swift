import Foundation
import LinkOutTestSupport
import Testing

/// Reports to Apple, end to end: the real binary records tokens and sends reports to stand-ins for
/// Apple that verify the JWT with PyJWT and the body with jsonschema (Support/apple_standin.py).
@Suite(.serialized) struct ReportingTests {
    @Test func aTokenWithNoPurchaseIsReportedNoLineItemAfterItsWindow() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        let old = try fixture.linkOut(server, ageDays: 4)
        let fresh = try fixture.linkOut(server, ageDays: 0)
        server.stop()

        let run = try fixture.report()
        #expect(run.status == 0, "\(run.stderr)")
        let accepted = try fixture.production.accepted()
        #expect(accepted.count == 1)
        #expect(accepted.first?["externalPurchaseId"] as? String == old)
        #expect(accepted.first?["status"] as? String == "NO_LINE_ITEM")
        let claims = accepted.first?["jwtClaims"] as? [String: Any]
        #expect(claims?["bid"] as? String == "com.example")
        #expect(!(try fixture.production.reports().contains { $0["externalPurchaseId"] as? String == fresh }))

        let row = try fixture.statusRow()
        #expect(row["reported"] as? Int == 1)
        #expect(row["waiting"] as? Int == 1)

        // A second run sends nothing more: the report was accepted, the fresh token is still in its window.
        try fixture.report()
        #expect(try fixture.production.reports().count == 1)

        // The export says where each token stands.
        let exported = try exportTokens(store: fixture.storePath)
        let reported = exported.first { $0["externalPurchaseId"] as? String == old }
        #expect(reported?["report"] as? String == "reported")
        #expect(reported?["reportedAs"] as? String == "NO_LINE_ITEM")
        #expect(exported.first { $0["externalPurchaseId"] as? String == fresh }?["report"] as? String == "unreported")
    }

    @Test func sandboxAndProductionTokensGoToTheirOwnHosts() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        let production = try fixture.linkOut(server)
        let sandbox = try fixture.linkOut(server, sandbox: true)
        // serve reports on its own thread (pollSeconds 0.2).
        let onProduction = try fixture.production.waitForAccepted(count: 1)
        let onSandbox = try fixture.sandbox.waitForAccepted(count: 1)
        #expect(onProduction.map { $0["externalPurchaseId"] as? String } == [production])
        #expect(onSandbox.map { $0["externalPurchaseId"] as? String } == [sandbox])
        // Nothing was refused on the way (a wrong environment would be).
        #expect(try (fixture.production.reports() + fixture.sandbox.reports()).allSatisfy { $0["accepted"] as? Bool == true })
        // Counted once linkout has read Apple's answers, a moment after Apple recorded them.
        var metrics = ""
        let deadline = Date().addingTimeInterval(5)
        repeat {
            metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
        } while !metrics.contains(#"linkout_reports_total{outcome="accepted"} 2"#) && Date() < deadline
        #expect(metrics.contains(#"linkout_reports_total{outcome="accepted"} 2"#), "\(metrics)")
        server.stop()
        #expect(try fixture.statusRow("sandbox")["reported"] as? Int == 1)
    }

    @Test func aServerErrorIsRetriedWithTheSameRequestIdentifier() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        try fixture.production.setMode(.serverError, count: 2)
        let id = try fixture.linkOut(server)
        let accepted = try fixture.production.waitForAccepted(count: 1, timeout: 15)
        server.stop()
        let sent = try fixture.production.reports().filter { $0["externalPurchaseId"] as? String == id }
        #expect(sent.map { $0["answer"] as? Int } == [500, 500, 200])
        #expect(Set(sent.compactMap { $0["requestIdentifier"] as? String }).count == 1)
        #expect(accepted.first?["requestIdentifier"] as? String == sent.first?["requestIdentifier"] as? String)
    }

    @Test func anAnswerThatNeverComesIsRetried() throws {
        let fixture = try ReportingFixture(reporting: #""timeoutSeconds": 1,"#)
        let server = try fixture.serve(reporting: false)
        let id = try fixture.linkOut(server)
        server.stop()
        try fixture.production.setMode(.hang)
        let first = try fixture.report()
        #expect(first.stdout.contains("1 to retry"), "\(first.stdout) \(first.stderr)")
        Thread.sleep(forTimeInterval: 1.2)
        try fixture.report()
        let sent = try fixture.production.reports().filter { $0["externalPurchaseId"] as? String == id }
        #expect(sent.count == 2)
        #expect(sent.last?["accepted"] as? Bool == true)
        #expect(Set(sent.compactMap { $0["requestIdentifier"] as? String }).count == 1)
    }

    @Test func aRefusedReportIsFailedWithApplesErrorsAndNotSentAgain() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        let id = try fixture.linkOut(server)
        server.stop()
        try fixture.production.setMode(.error400)
        let run = try fixture.report()
        #expect(run.stdout.contains("1 failed"), "\(run.stdout)")
        #expect(run.stderr.contains("Apple refused a report"), "\(run.stderr)")
        Thread.sleep(forTimeInterval: 1.2)
        try fixture.report()
        #expect(try fixture.production.reports().count == 1)
        let status = try fixture.status()
        #expect((status["apps"] as? [[String: Any]])?.first?["failed"] as? Int == 1)
        let failed = status["failed"] as? [[String: Any]] ?? []
        #expect(failed.first?["externalPurchaseId"] as? String == id)
        #expect((failed.first?["answer"] as? String)?.contains("4000050") == true, "\(failed)")
    }

    @Test func aDuplicateAnswerIsConfirmedByReadingTheReportBack() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        try fixture.linkOut(server)
        server.stop()
        try fixture.production.setMode(.duplicate)
        let run = try fixture.report()
        #expect(run.stdout.contains("1 accepted"), "\(run.stdout) \(run.stderr)")
        #expect(try fixture.production.lookups().map { $0["answer"] as? Int } == [200])
        #expect(try fixture.statusRow()["reported"] as? Int == 1)
    }

    @Test func aRefusedKeyStopsSendingAndSaysSo() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        try fixture.linkOut(server)
        try fixture.linkOut(server)
        server.stop()
        try fixture.production.setMode(.unauthorized, count: 5)
        let run = try fixture.report()
        #expect(run.status == 2)
        #expect(run.stderr.contains("Apple refused the key (401)"), "\(run.stderr)")
        // The first 401 stops the round: the second report is not sent into the same wall.
        #expect(try fixture.production.reports().count == 1)
        #expect(try fixture.statusRow()["reported"] as? Int == 0)
    }

    @Test func aRateLimitWaitsForRetryAfter() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        try fixture.linkOut(server)
        server.stop()
        // Retry-After well beyond retrySeconds (1 s), so that a loaded machine's slow process starts cannot
        // carry the second run past it.
        try fixture.production.setMode(.rateLimited, retryAfterMs: 6000)
        let run = try fixture.report()
        #expect(run.stdout.contains("1 to retry"), "\(run.stdout)")
        let answeredAt = try #require(try fixture.production.reports().first?["receivedAt"] as? Int)
        // retrySeconds alone would allow a resend after 1 s: the run after 1.1 s must still wait.
        Thread.sleep(forTimeInterval: 1.1)
        try fixture.report()
        #expect(try fixture.production.reports().count == 1)
        // Past Retry-After (the stand-in's clock is this machine's), the report goes.
        let retryAt = Double(answeredAt + 6000 + 200) / 1000
        Thread.sleep(forTimeInterval: max(0, retryAt - Date().timeIntervalSince1970))
        try fixture.report()
        #expect(try fixture.production.accepted().count == 1)
    }

    @Test func aSenderKilledMidSendLosesNoReportAndSendsNoneTwice() throws {
        let fixture = try ReportingFixture(reporting: #""timeoutSeconds": 3,"#)
        try fixture.production.setLatency(ms: 2000)
        let server = try fixture.serve()
        let id = try fixture.linkOut(server)
        // Wait until the report is on its way (leased and sent: `sending` in report status), then kill
        // linkout before Apple's answer comes (the stand-in answers after 2 s).
        let deadline = Date().addingTimeInterval(10)
        while try fixture.statusRow()["sending"] as? Int != 1, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        server.crash()
        #expect(try fixture.production.accepted().isEmpty)
        try fixture.production.setLatency(ms: 0)
        // Apple took it (the stand-in finishes the request it read); the answer was lost with linkout.
        try fixture.production.waitForAccepted(count: 1)
        // The dead sender's lease (timeout 3 s + 5 s) runs out; the next sender sends the same report again.
        Thread.sleep(forTimeInterval: 8.2)
        // Waiting to be sent again, at once, and not as Apple's failure: linkout stopped, Apple did not fail.
        let waiting = try #require((fixture.status()["reporting"] as? [String: Any])?["waiting"] as? [[String: Any]])
        #expect(waiting.count == 1 && waiting.first?["attempts"] as? Int == 1 && waiting.first?["failures"] as? Int == 0, "\(waiting)")
        #expect(try fixture.statusRow()["retrying"] as? Int == 1)
        let run = try fixture.report()
        #expect(run.stdout.contains("1 accepted"), "\(run.stdout) \(run.stderr)")
        let sent = try fixture.production.reports().filter { $0["externalPurchaseId"] as? String == id }
        #expect(sent.count == 2)
        #expect(Set(sent.compactMap { $0["requestIdentifier"] as? String }).count == 1)
        #expect(try fixture.production.accepted().count == 1)
        #expect(try fixture.statusRow()["reported"] as? Int == 1)
    }

    /// Many reports in flight (the stand-in answers after 2 s) when linkout is killed with SIGKILL: Apple
    /// takes those it read, their answers are lost; once the leases run out, the next sender sends them
    /// again with the same requestIdentifiers, Apple's duplicate answers and the GETs settle them, and the
    /// rest go. Every token is accepted exactly once, none lost, on SQLite and on PostgreSQL.
    @Test(arguments: ["sqlite", "postgres"])
    func aSenderKilledWithManyReportsInFlightLosesNoneAndSendsNoneTwice(store: String) throws {
        var url: String?
        if store == "postgres" {
            url = try PostgresServer.createDatabase()
            let migrate = try LinkoutBinary.run(["store", "migrate", "--store", url!])
            try #require(migrate.status == 0, "\(migrate.stderr)")
        }
        let fixture = try ReportingFixture(reporting: #""timeoutSeconds": 3, "maxConcurrentRequests": 16,"#, store: url)
        let recorder = try fixture.serve(reporting: false)
        var ids: [String] = []
        for _ in 0..<40 { ids.append(try fixture.linkOut(recorder, ageDays: 4)) }
        recorder.stop()
        try fixture.production.setLatency(ms: 2000)
        let server = try fixture.serve()
        // Wait until several are in Apple's hands at once, then kill linkout before their answers come.
        let deadline = Date().addingTimeInterval(30)
        while try fixture.production.inFlight().count < 8, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let inFlight = try fixture.production.inFlight().count
        server.crash()
        #expect(inFlight >= 8, "only \(inFlight) reports were in flight at once")
        try fixture.production.setLatency(ms: 0)
        // The dead sender's leases (timeout 3 s + 5 s) run out; the stand-in has answered what it read.
        Thread.sleep(forTimeInterval: 8.2)
        let run = try fixture.report()
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        let accepted = try fixture.production.accepted().compactMap { $0["externalPurchaseId"] as? String }
        #expect(accepted.count == ids.count, "\(accepted.count) accepted of \(ids.count)")
        #expect(Set(accepted) == Set(ids))
        // Each token's sends, however many, were one report: one requestIdentifier.
        let sent = try fixture.production.reports()
        for id in ids {
            let requests = Set(sent.filter { $0["externalPurchaseId"] as? String == id }.compactMap { $0["requestIdentifier"] as? String })
            #expect(requests.count == 1, "\(id): \(requests)")
        }
        #expect(!sent.contains { ($0["problems"] as? [String] ?? []).contains { $0.contains("simultaneous") } })
        #expect(try fixture.statusRow()["reported"] as? Int == ids.count)
        print("kill -9 with \(inFlight) reports in flight: \(sent.count) sends of \(ids.count) reports, each accepted once")
    }

    /// With no reporting section nothing reaches Apple: serve says so at start, report status in its first
    /// line and its JSON, the metrics with `linkout_reporting_enabled 0` beside the tokens' counts, and
    /// `transactions import` when it keeps line items that will not be sent.
    @Test func reportingOffIsSaidWhereTheOperatorLooks() throws {
        let fixture = try ReportingFixture()
        let first = try fixture.serve(reporting: false)
        let id = try fixture.linkOut(first)
        #expect(
            try String(contentsOfFile: first.logPath, encoding: .utf8).contains(
                "reporting is OFF: \(fixture.recordOnlyConfigPath) has no reporting section"))
        #expect(first.stop() == 0)
        // Started again on the store that holds a token: its first count says how many are not reported.
        let server = try fixture.serve(reporting: false)
        let metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
        #expect(metrics.contains("linkout_reporting_enabled 0"), "\(metrics)")
        let deadline = Date().addingTimeInterval(10)
        while !(try fetch(port: server.adminPort, "GET", "/metrics").bodyText.contains(#"linkout_reporting_tokens{state="due"} 1"#)),
            Date() < deadline
        {
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(try fetch(port: server.adminPort, "GET", "/metrics").bodyText.contains(#"linkout_reporting_tokens{state="due"} 1"#))
        #expect(
            try String(contentsOfFile: server.logPath, encoding: .utf8).contains(
                "reporting is OFF: 1 token(s) recorded and none reported to Apple"))

        let text = try LinkoutBinary.run(["report", "status", "--config", fixture.recordOnlyConfigPath])
        #expect(
            text.stdout.hasPrefix(
                "reporting: OFF: \(fixture.recordOnlyConfigPath) has no reporting section, so nothing is sent to Apple; 1 token(s) recorded are not reported"
            ), "\(text.stdout)")
        let json = try LinkoutBinary.run(["report", "status", "--config", fixture.recordOnlyConfigPath, "--format", "json"])
        let reporter = try #require(
            (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["reporting"] as? [String: Any])
        #expect(reporter["enabled"] as? Bool == false)

        let lines = fixture.folder.write(
            "lines.jsonl",
            String(
                decoding: try JSONSerialization.data(withJSONObject: [
                    "externalPurchaseId": id, "lineItems": [ReportingFixture.buy("order-1")],
                ]), as: UTF8.self) + "\n")
        let imported = try LinkoutBinary.run(["transactions", "import", "--config", fixture.recordOnlyConfigPath, lines])
        #expect(imported.status == 0)
        #expect(imported.stderr.contains("warning: reporting is OFF"), "\(imported.stderr)")
        #expect(server.stop() == 0)
        // With reporting on, neither line.
        let on = try LinkoutBinary.run(["report", "status", "--config", fixture.configPath])
        #expect(on.stdout.hasPrefix("reporting: on\n"), "\(on.stdout)")
    }

    /// Why a report is stuck, in report status rather than only in the log: each report waiting to be sent
    /// again with its sends, Apple's failures, last answer and next try; one count for it in the table and
    /// the summary; a 401's pause in the first line, also after a restart.
    @Test func aStuckReportSaysWhyInReportStatus() throws {
        let fixture = try ReportingFixture(reporting: #""timeoutSeconds": 1,"#)
        let server = try fixture.serve(reporting: false)
        let id = try fixture.linkOut(server)
        server.stop()
        try fixture.production.setMode(.serverError, count: 10)
        #expect(try fixture.report().stdout.contains("1 to retry"))
        let text = try LinkoutBinary.run(["report", "status", "--config", fixture.configPath]).stdout
        #expect(text.contains("reports: 0 to send, 0 sending, 1 retrying, 0 accepted, 0 failed; next try "), "\(text)")
        #expect(text.contains("waiting to be sent again"), "\(text)")
        #expect(text.contains("\(id)  NO_LINE_ITEM  sent 1x (1 failure)  next try "), "\(text)")
        #expect(text.contains("    last: HTTP 500"), "\(text)")
        #expect(try fixture.statusRow()["retrying"] as? Int == 1 && fixture.statusRow()["sending"] as? Int == 0)

        // A 401 pauses sending; report status says so, as a restarted serve does.
        let other = try fixture.serve(reporting: false)
        try fixture.linkOut(other)
        other.stop()
        try fixture.production.setMode(.unauthorized, count: 5)
        Thread.sleep(forTimeInterval: 1.1)
        #expect(try fixture.report().status == 2)
        let paused = try LinkoutBinary.run(["report", "status", "--config", fixture.configPath]).stdout
        #expect(paused.hasPrefix("reporting: PAUSED until "), "\(paused)")
        let restarted = try fixture.serve()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try String(contentsOfFile: restarted.logPath, encoding: .utf8).contains("reporting is PAUSED until"))
        #expect(try fetch(port: restarted.adminPort, "GET", "/metrics").bodyText.contains("linkout_reporting_paused 1"))
        #expect(restarted.stop() == 0)
    }
}
