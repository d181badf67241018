import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// `linkout report verify` against the Apple stand-ins: reports sent and accepted by `report run`, then
/// read back with GET and compared with the outbox's bodies; the stand-in's copies changed behind
/// linkout's back (`POST /_standin/tamper`) to plant differences, and its GETs answered 401, 429 or 500
/// (`POST /_standin/lookup-mode`) to see the exit codes and the pacing.
@Suite(.serialized) struct ReportVerifyTests {
    /// Tokens recorded and reported: `old` of them created `oldAgeDays` ago, one with a line item
    /// (`order-1`, a LINE_ITEM report), one sandbox token; the rest NO_LINE_ITEM, all accepted.
    struct Reported {
        let fixture: ReportingFixture
        var ids: [String] = []
        var bought = ""
        var sandbox = ""
        var old: [String] = []

        /// - Parameter store: a PostgreSQL URL instead of the fixture's SQLite file.
        init(plain: Int = 2, old oldCount: Int = 0, oldAgeDays: Double = 70, store: String? = nil) throws {
            fixture = try ReportingFixture(store: store)
            let server = try fixture.serve(reporting: false)
            for _ in 0..<plain { ids.append(try fixture.linkOut(server)) }
            for _ in 0..<oldCount { old.append(try fixture.linkOut(server, ageDays: oldAgeDays)) }
            bought = try fixture.linkOut(server)
            let posted = try fixture.post(server, ["externalPurchaseId": bought, "lineItems": [ReportingFixture.buy("order-1")]])
            try #require(posted.status == 200, "\(posted.json)")
            sandbox = try fixture.linkOut(server, sandbox: true)
            server.stop()
            let run = try fixture.report()
            try #require(run.status == 0, "\(run.stdout) \(run.stderr)")
            let accepted = plain + oldCount + 1
            try #require(try fixture.production.accepted().count == accepted)
            try #require(try fixture.sandbox.accepted().count == 1)
        }

        var all: [String] { ids + old + [bought, sandbox] }

        /// The requestIdentifier of the accepted report of `id`.
        func request(of id: String) throws -> String {
            let accepted = try fixture.production.accepted() + fixture.sandbox.accepted()
            return try #require(accepted.first { $0["externalPurchaseId"] as? String == id }?["requestIdentifier"] as? String)
        }

        func verify(_ arguments: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
            try LinkoutBinary.run(["report", "verify", "--config", fixture.configPath] + arguments)
        }

        func lookups() throws -> [[String: Any]] {
            try fixture.production.lookups() + fixture.sandbox.lookups()
        }
    }

    /// `YYYY-MM` of the UTC month `days` days ago.
    static func month(daysAgo days: Double) -> String {
        let created = Date(timeIntervalSince1970: Double(TokenBuilder.nowMs) / 1000 - days * 86_400)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month], from: created)
        return String(format: "%04d-%02d", parts.year!, parts.month!)
    }

    @Test func everyReportMatchingApplesCopyExitsZero() throws {
        let reported = try Reported()
        let result = try reported.verify()
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout == "reports: 4 checked of 4 accepted in the store: 4 match Apple's copy, 0 differ, 0 unreadable\n")
        // Each report read from the host of its environment, once, with the same JWT checks as sending.
        let lookups = try reported.lookups()
        #expect(lookups.count == 4)
        #expect(lookups.allSatisfy { $0["answer"] as? Int == 200 && ($0["problems"] as? [Any])?.isEmpty == true }, "\(lookups)")
        #expect(
            try reported.fixture.sandbox.lookups().map { $0["requestIdentifier"] as? String } == [
                try reported.request(of: reported.sandbox)
            ])

        let json = try reported.verify(["--format", "json"])
        #expect(json.status == 0)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(parsed["checked"] as? Int == 4 && parsed["matched"] as? Int == 4 && parsed["differing"] as? Int == 0)
        #expect((parsed["differences"] as? [Any])?.isEmpty == true)
    }

    @Test func aPlantedDifferenceIsNamedByReportTokenAndFieldAndExitsOne() throws {
        let reported = try Reported()
        let request = try reported.request(of: reported.bought)
        // The same line, its members in another order and an amount written as a fraction: the same JSON
        // value, no difference. Then a tax amount Apple holds otherwise, a field it lacks, one it added.
        let sent = try #require(try reported.fixture.production.accepted().first { $0["requestIdentifier"] as? String == request })
        let sentLine = try #require(((sent["body"] as? [String: Any])?["lineItems"] as? [[String: Any]])?.first)
        let reordered = try sentLine.keys.sorted().reversed().map { key in
            let value =
                key == "amountTaxInclusive"
                ? "2990.0"
                : String(decoding: try JSONSerialization.data(withJSONObject: sentLine[key]!, options: .fragmentsAllowed), as: UTF8.self)
            return "\"\(key)\": \(value)"
        }.joined(separator: ", ")
        #expect(sentLine["amountTaxInclusive"] as? Int == 2990)
        try reported.fixture.production.tamper(requestIdentifier: request, path: ["lineItems", 0], json: "{\(reordered)}")
        let same = try reported.verify()
        #expect(same.status == 0, "reordered members and 2990.0 for 2990 are the same report: \(same.stdout)")

        try reported.fixture.production.tamper(requestIdentifier: request, path: ["lineItems", 0, "taxAmount"], value: 521)
        try reported.fixture.production.tamper(requestIdentifier: request, path: ["lineItems", 0, "taxCountry"], value: nil)
        try reported.fixture.production.tamper(requestIdentifier: request, path: ["lineItems", 0, "storefront"], value: "NLD")
        let result = try reported.verify()
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let prefix = "\(request) \(reported.bought) lineItems[lineItemId=order-1]"
        #expect(
            lines == [
                "\(prefix).taxAmount: linkout sent 520, Apple holds 521",
                "\(prefix).taxCountry: linkout sent \"NLD\", Apple holds nothing",
                "\(prefix).storefront: linkout sent nothing, Apple holds \"NLD\"",
                "reports: 4 checked of 4 accepted in the store: 3 match Apple's copy, 1 differs, 0 unreadable",
            ], "\(result.stdout)")

        let json = try reported.verify(["--format", "json"])
        #expect(json.status == 1)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let differences = parsed["differences"] as? [[String: Any]] ?? []
        #expect(differences.count == 3)
        let tax = try #require(differences.first)
        #expect(tax["requestIdentifier"] as? String == request && tax["externalPurchaseId"] as? String == reported.bought)
        #expect(tax["path"] as? String == "lineItems[lineItemId=order-1].taxAmount" && tax["kind"] as? String == "changed")
        #expect(tax["sent"] as? Int == 520 && tax["held"] as? Int == 521)
        #expect(differences.map { $0["kind"] as? String } == ["changed", "missing", "extra"])
    }

    /// The outbox's queries are SQLReportingStore's, shared by both stores: the same check on PostgreSQL.
    @Test func onPostgreSQLTooAReportsDifferenceIsFound() throws {
        let url = try PostgresServer.createDatabase()
        try #require(try LinkoutBinary.run(["store", "migrate", "--store", url]).status == 0)
        let reported = try Reported(plain: 1, old: 1, store: url)
        #expect(try reported.verify().status == 0)
        let request = try reported.request(of: reported.bought)
        try reported.fixture.production.tamper(requestIdentifier: request, path: ["status"], value: "NO_LINE_ITEM")
        let result = try reported.verify(["--sample", "10"])
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        #expect(
            result.stdout.contains("\(request) \(reported.bought) status: linkout sent \"LINE_ITEM\", Apple holds \"NO_LINE_ITEM\"\n"),
            "\(result.stdout)")
        #expect(
            result.stdout.hasSuffix(
                "reports: 4 checked, a random sample of 4 accepted in the store: 3 match Apple's copy, 1 differs, 0 unreadable\n"))
        let month = try reported.verify(["--month", Self.month(daysAgo: 70)])
        #expect(month.status == 0 && month.stdout.contains("reports: 1 checked of 1 accepted"), "\(month.stdout)")
    }

    @Test func aReportAppleNoLongerReturnsIsADifference() throws {
        let reported = try Reported()
        let gone = try reported.request(of: reported.ids[0])
        try reported.fixture.production.forget(requestIdentifier: gone)
        let result = try reported.verify()
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        #expect(
            result.stdout.hasPrefix(
                "\(gone) \(reported.ids[0]) (report): linkout sent it and Apple accepted it, Apple holds none now (404)\n"),
            "\(result.stdout)")
        #expect(result.stdout.hasSuffix("3 match Apple's copy, 1 differs, 0 unreadable\n"))
        #expect(try reported.lookups().filter { $0["answer"] as? Int == 404 }.count == 1)
    }

    @Test func aRefusedKeyStopsAtOnceWithExitTwo() throws {
        let reported = try Reported()
        try reported.fixture.production.setLookupMode(.unauthorized, count: 10)
        try reported.fixture.sandbox.setLookupMode(.unauthorized, count: 10)
        let result = try reported.verify()
        #expect(result.status == 2, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("Apple refused the key (HTTP 401"), "\(result.stderr)")
        #expect(try reported.lookups().count == 1, "nothing more is asked once the key is refused")
    }

    /// At most `--rate` requests a second, and after a 429 or a 5xx a wait before the next: Apple's
    /// `Retry-After` when it gives one, else the backoff (1 s after the first failure in a row).
    @Test func requestsArePacedAndBackOffOnRateLimitsAndServerErrors() throws {
        let reported = try Reported(plain: 4)
        let paced = try reported.verify(["--rate", "4"])
        #expect(paced.status == 0, "\(paced.stdout) \(paced.stderr)")
        var times = try reported.fixture.production.lookups().compactMap { $0["receivedAt"] as? Int }
        #expect(times.count == 5)
        // 4 a second is 250 ms apart, as linkout sends them; the stand-in notes each when it reads it, so one
        // request held up on a busy machine (a connection, a handshake) narrows one gap and widens the next:
        // each gap bounded loosely, their sum tightly. Unpaced, they would be milliseconds apart.
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later - earlier >= 150, "4 a second is 250 ms apart: \(times)")
        }
        if let first = times.first, let last = times.last { #expect(last - first >= 4 * 250 - 20, "4 a second is 250 ms apart: \(times)") }

        // (The stand-in keeps every lookup; each run's are those after the ones before it.)
        var before = try reported.fixture.production.lookups().count
        try reported.fixture.production.setLookupMode(.rateLimited, count: 1, retryAfterMs: 1500)
        let limited = try reported.verify(["--rate", "10"])
        #expect(limited.status == 0, "\(limited.stdout) \(limited.stderr)")
        let afterLimit = Array(try reported.fixture.production.lookups().dropFirst(before))
        #expect(afterLimit.map { $0["answer"] as? Int } == [429, 200, 200, 200, 200, 200])
        times = afterLimit.compactMap { $0["receivedAt"] as? Int }
        #expect(times[1] - times[0] >= 1400, "Retry-After 1.5 s: \(times)")
        #expect(times[2] - times[1] < 1000, "then the rate again: \(times)")

        before = try reported.fixture.production.lookups().count
        try reported.fixture.production.setLookupMode(.serverError, count: 2)
        let failing = try reported.verify(["--rate", "10"])
        #expect(failing.status == 0, "\(failing.stdout) \(failing.stderr)")
        let afterErrors = Array(try reported.fixture.production.lookups().dropFirst(before))
        #expect(afterErrors.map { $0["answer"] as? Int } == [500, 500, 200, 200, 200, 200, 200])
        times = afterErrors.compactMap { $0["receivedAt"] as? Int }
        #expect(times[1] - times[0] >= 900 && times[2] - times[1] >= 1900, "backoff 1 s, then 2 s: \(times)")
    }

    @Test func appleFailingEveryTryEndsTheRunWithExitThree() throws {
        let reported = try Reported(plain: 1)
        try reported.fixture.production.setLookupMode(.serverError, count: 100)
        try reported.fixture.sandbox.setLookupMode(.serverError, count: 100)
        let result = try reported.verify(["--rate", "10"])
        #expect(result.status == 3, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains("Apple failed 4 times in a row (last: HTTP 500)"), "\(result.stderr)")
        #expect(result.stderr.contains("3 report(s) not checked"), "\(result.stderr)")
        #expect(try reported.lookups().count == 4)
    }

    @Test func monthAndSampleChooseWhichReportsAreChecked() throws {
        let reported = try Reported(plain: 2, old: 2, oldAgeDays: 70)
        // The month the old tokens were created in, in UTC; the others (4 days old) are in another.
        let month = Self.month(daysAgo: 70)
        let oldRequests = Set(try reported.old.map { try reported.request(of: $0) })

        let byMonth = try reported.verify(["--month", month])
        #expect(byMonth.status == 0, "\(byMonth.stdout) \(byMonth.stderr)")
        #expect(
            byMonth.stdout
                == "reports: 2 checked of 2 accepted of tokens created in \(month) (UTC): 2 match Apple's copy, 0 differ, 0 unreadable\n")
        #expect(Set(try reported.lookups().compactMap { $0["requestIdentifier"] as? String }) == oldRequests)

        let before = (try reported.fixture.production.lookups().count, try reported.fixture.sandbox.lookups().count)
        let sampled = try reported.verify(["--sample", "3", "--rate", "10"])
        #expect(sampled.status == 0, "\(sampled.stdout) \(sampled.stderr)")
        #expect(
            sampled.stdout
                == "reports: 3 checked, a random sample of 6 accepted in the store: 3 match Apple's copy, 0 differ, 0 unreadable\n")
        let asked = (try reported.fixture.production.lookups().dropFirst(before.0) + reported.fixture.sandbox.lookups().dropFirst(before.1))
            .compactMap { $0["requestIdentifier"] as? String }
        #expect(asked.count == 3 && Set(asked).count == 3)

        // A month with no token checks nothing, and says so.
        let empty = try reported.verify(["--month", "1999-01"])
        #expect(empty.status == 0)
        #expect(
            empty.stdout
                == "reports: 0 checked of 0 accepted of tokens created in 1999-01 (UTC): 0 match Apple's copy, 0 differ, 0 unreadable\n")
    }

    @Test(arguments: [
        (["--month", "2026-13"], "--month must be a UTC month as YYYY-MM, such as 2026-05, not '2026-13'"),
        (["--month", "2026-5"], "--month must be a UTC month as YYYY-MM"),
        (["--sample", "0"], "--sample must be 1 or more, not 0"),
        (["--rate", "50"], "--rate must be from 0.1 to 10.0 requests a second, not 50.0"),
        (["--format", "xml"], "--format must be text or json"),
    ])
    func badOptionsAreRefusedByName(arguments: [String], message: String) throws {
        let result = try LinkoutBinary.run(["report", "verify", "--config", "config/linkout.json"] + arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func aConfigWithoutReportingIsRefused() throws {
        let result = try LinkoutBinary.run(["report", "verify", "--config", "config/linkout.json"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("has no reporting section"), "\(result.stderr)")
    }
}
