import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// `linkout statement` and month close against the real binary: tokens from link-outs and from an app's
/// backend, line items from the checkout's API, Apple's stand-in accepting the reports; on SQLite and on
/// PostgreSQL.
@Suite(.serialized) struct StatementTests {
    typealias Body = [String: Any]
    static let day: Int64 = 86_400_000
    static let browser = "User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Safari/604.1"

    /// Last month (UTC): every date of it is in the past, as line items must be.
    static var month: UTCMonth { UTCMonth(containing: TokenBuilder.nowMs).previous }

    static let commission = #"""
        "commission": { "regions": [
          { "name": "EU", "countries": ["nl", "de"], "from": "2025-01-01", "rate": 0.15, "reducedRate": 0.10, "windowDays": 7 },
          { "name": "JP", "countries": ["jp"], "from": "2025-12-18", "rate": 0.15, "reducedRate": 0.10, "windowDays": 7,
            "subscriptionReducedAfterPaidDays": 365,
            "inApp": { "rate": 0.20, "reducedRate": 0.10, "subscriptionReducedAfterPaidDays": 365 } } ] },
        """#
    static let apps =
        #"[{ "bundleId": "com.example", "appAppleId": 1234567890 }, { "bundleId": "com.small", "appAppleId": 2, "commissionTier": "reduced" }]"#

    /// A line item in milli-units of `currency` (tax 21 %), dated `at`.
    static func line(_ id: String, at: Int64, amount: Int64, currency: String = "EUR", refunds: String? = nil, extra: Body = [:]) -> Body {
        // 21 % in whole cents (whole yen): linkout refuses an amount that is not.
        let step: Int64 = currency == "JPY" ? 1000 : 10
        let tax = amount * 21 / 100 / step * step
        var line: Body = [
            "lineItemId": id, "creationDate": at, "pricingCurrency": currency, "reportingCurrency": currency,
            "amountTaxExclusive": amount, "amountTaxInclusive": amount + tax, "netAmountTaxExclusive": amount, "taxAmount": tax,
            "taxCountry": currency == "JPY" ? "JPN" : "NLD",
        ]
        if let refunds {
            line["eventType"] = "REFUND"
            line["referenceLineItemId"] = refunds
        } else {
            line.merge(["eventType": "BUY", "productType": "ONE_TIME_BUY", "productIdentifier": "gems", "quantity": 1]) { $1 }
        }
        return line.merging(extra) { $1 }
    }

    func linkOut(
        _ fixture: ReportingFixture, _ server: GatewayProcess, created: Int64, bundleId: String = "com.example",
        appAppleId: Int64 = 1234567890
    ) throws -> String {
        let id = UUID().uuidString.lowercased()
        let token = TokenBuilder.minted(id: id, bundleId: bundleId, appAppleId: appAppleId, created: created)
        let response = try server.get(TokenBuilder.linkOut(token: token, bundleId: bundleId), headers: [Self.browser])
        try #require(response.status == 302, "\(response.status)")
        return id
    }

    func post(_ fixture: ReportingFixture, _ server: GatewayProcess, _ id: String, _ lines: [Body]) throws {
        let answer = try fixture.post(server, ["externalPurchaseId": id, "lineItems": lines])
        try #require(answer.status == 200, "\(answer.json)")
    }

    @Test(arguments: [false, true])
    func aMonthsStatementReAddsFromItsLinesAndMonthCloseCountsEachMonth(postgres: Bool) throws {
        let store: String? = postgres ? try PostgresServer.createDatabase() : nil
        if let store { try #require(try LinkoutBinary.run(["store", "migrate", "--store", store]).status == 0) }
        let fixture = try ReportingFixture(top: Self.commission, store: store, apps: Self.apps)
        let server = try fixture.serve(reporting: false)
        let month = Self.month

        // com.example on the nl link (EU): a sale on the window's last millisecond, one a millisecond after,
        // a refund of the first a day later, a sale of next month, and a token whose only line was withdrawn.
        let tapA = month.day(3) + 12_345
        let a = try linkOut(fixture, server, created: tapA)
        try post(
            fixture, server, a,
            [
                Self.line("a-edge", at: tapA + 7 * Self.day, amount: 10_000),
                Self.line("a-late", at: tapA + 7 * Self.day + 1, amount: 20_000),
                Self.line("a-next", at: month.end, amount: 50_000),
            ])
        try post(fixture, server, a, [Self.line("a-refund", at: tapA + 8 * Self.day, amount: 3_000, refunds: "a-edge")])
        let c = try linkOut(fixture, server, created: month.day(20))
        try post(fixture, server, c, [Self.line("c-buy", at: month.day(20) + 1000, amount: 5_000)])
        try post(
            fixture, server, c,
            [Self.line("c-buy", at: month.day(20) + 1000, amount: 5_000, extra: ["restatement": true, "erroneouslySubmitted": true])])
        // com.small, reduced tier: 10 % of 12.34 is 1.234, so 1.23.
        let b = try linkOut(fixture, server, created: month.day(4), bundleId: "com.small", appAppleId: 2)
        try post(fixture, server, b, [Self.line("b-buy", at: month.day(5), amount: 12_340)])
        // A Japanese IN_APP token the app's backend registered: never on a link, charged at Japan's in-app
        // terms (here 20 %) on every sale, 30 days after the token too, where a link-out's window is long past.
        let tapD = month.day(10)
        let d = UUID().uuidString.lowercased()
        let registered = try fixture.post(
            server,
            [
                "token": TokenBuilder.minted(id: d, created: tapD, type: TokenType(rawValue: "IN_APP"), expiration: tapD + 30 * Self.day),
                "bundleId": "com.example", "country": "jp",
            ], path: "/v1/tokens")
        try #require(registered.status == 200, "\(registered.json)")
        try post(fixture, server, d, [Self.line("d-yen", at: tapD + Self.day, amount: 1_234_000, currency: "JPY")])
        try post(fixture, server, d, [Self.line("d-later", at: tapD + 15 * Self.day, amount: 100_000, currency: "JPY")])
        // Then a renewal of a subscription past its first year (400 paid days): Japan's reduced 10 %, and
        // its partial refund at the same rate.
        let renewedAt = tapD + 2 * Self.day
        try post(
            fixture, server, d,
            [
                Self.line(
                    "d-renewal", at: renewedAt, amount: 1_000_000, currency: "JPY",
                    extra: [
                        "productType": "SUBSCRIPTION", "productIdentifier": "plus.monthly", "subscriptionEvent": "RENEWAL",
                        "subscriptionStartDate": renewedAt, "subscriptionEndDate": renewedAt + 30 * Self.day,
                        "subscriptionDaysOfPaidService": 400,
                    ])
            ])
        try post(
            fixture, server, d, [Self.line("d-refund", at: renewedAt + Self.day, amount: 400_000, currency: "JPY", refunds: "d-renewal")])
        // A sandbox token (TestFlight's, or mint-token's default) with a sale: in neither the rows nor month close.
        let sandbox = "SANDBOX_" + UUID().uuidString.lowercased()
        let sandboxToken = TokenBuilder.minted(id: sandbox, created: month.day(6))
        try #require(try server.get(TokenBuilder.linkOut(token: sandboxToken), headers: [Self.browser]).status == 302)
        try post(fixture, server, sandbox, [Self.line("s-buy", at: month.day(6) + 1000, amount: 990_000)])
        // Month close across the boundary: the month's last millisecond and the next's first.
        let lastOfMonth = try linkOut(fixture, server, created: month.end - 1)
        _ = try linkOut(fixture, server, created: month.end)
        server.stop()

        let run = try LinkoutBinary.run(["statement", "--config", fixture.configPath, "--month", "\(month)", "--format", "json", "--lines"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? Body)
        #expect(json["month"] as? String == "\(month)")
        let rows = json["rows"] as? [Body] ?? []
        func row(_ app: String, _ region: String, _ currency: String, kind: String = "linkOut") -> [Int] {
            guard
                let found = rows.first(where: {
                    $0["bundleId"] as? String == app && $0["region"] as? String == region && $0["currency"] as? String == currency
                        && $0["kind"] as? String == kind
                })
            else { return [] }
            return ["tokens", "tokensVisited", "tokensPurchased", "salesInWindow", "salesOutsideWindow", "commission"].map {
                found[$0] as? Int ?? -1
            }
        }
        // a, c and the month's last: 3 tokens on nl; a's 10.00 - 3.00 in the window (15 %: 1.50 - 0.45), 20.00 after.
        #expect(row("com.example", "EU", "EUR") == [3, 3, 1, 7_000, 20_000, 1_050], "\(rows)")
        // In-app: 20 % of 1,234 yen is 246.8: 247, and 20 yen on the 100 of day 15; 10 % of the renewal's
        // 1,000 yen less 10 % of its 400 yen refund (Japan's reduced rate after a year, for in-app too here).
        #expect(row("com.example", "JP", "JPY", kind: "inApp") == [1, 0, 1, 1_934_000, 0, 247_000 + 20_000 + 100_000 - 40_000], "\(rows)")
        #expect(row("com.small", "EU", "EUR") == [1, 1, 1, 12_340, 0, 1_230], "\(rows)")
        #expect(rows.count == 3, "\(rows)")
        #expect(json["sandboxTokens"] as? Int == 1)
        // The lines re-add to the rows exactly.
        let lines = json["lines"] as? [Body] ?? []
        #expect(
            Set(lines.compactMap { $0["lineItemId"] as? String }) == [
                "a-edge", "a-late", "a-refund", "b-buy", "d-yen", "d-later", "d-renewal", "d-refund",
            ])
        #expect(lines.filter { ($0["lineItemId"] as? String)?.hasPrefix("d-re") == true }.map { $0["rate"] as? String } == ["0.1", "0.1"])
        // Each line says the kind it was charged as, and at which rate.
        let dYen = lines.first { $0["lineItemId"] as? String == "d-yen" }
        #expect(
            dYen?["kind"] as? String == "inApp" && dYen?["rate"] as? String == "0.2" && dYen?["inWindow"] as? Bool == true, "\(dYen ?? [:])"
        )
        #expect(lines.first { $0["lineItemId"] as? String == "a-edge" }?["kind"] as? String == "linkOut")
        for found in rows {
            let mine = lines.filter {
                $0["bundleId"] as? String == found["bundleId"] as? String && $0["currency"] as? String == found["currency"] as? String
                    && $0["region"] as? String == found["region"] as? String && $0["kind"] as? String == found["kind"] as? String
            }
            #expect(mine.map { $0["commission"] as? Int ?? 0 }.reduce(0, +) == found["commission"] as? Int)
        }
        #expect(lines.first { $0["lineItemId"] as? String == "a-late" }?["inWindow"] as? Bool == false)
        #expect(lines.first { $0["lineItemId"] as? String == "a-refund" }?["inWindow"] as? Bool == true, "a refund is in its sale's window")

        // The admin listener answers the same statement, and month close by month.
        let admin = try fixture.serve(reporting: false)
        let api = try fetch(port: admin.adminPort, "GET", "/api/statement?month=\(month)&lines=1")
        #expect(api.status == 200)
        let served = try #require(try JSONSerialization.jsonObject(with: Data(api.body)) as? Body)
        #expect(NSDictionary(dictionary: served).isEqual(to: json), "the dashboard's statement is the command's")
        #expect(try fetch(port: admin.adminPort, "GET", "/api/statement?month=2026-13").status == 400)
        let closeList =
            try JSONSerialization.jsonObject(with: Data(try fetch(port: admin.adminPort, "GET", "/api/month-close").body)) as? [Body] ?? []
        #expect(closeList.map { $0["month"] as? String } == ["\(month)", "\(month.next)"], "\(closeList)")
        #expect(admin.stop() == 0)

        // The CSV of lines has its commission column; the text names the month.
        let csv = try LinkoutBinary.run(["statement", "--config", fixture.configPath, "--month", "\(month)", "--format", "csv", "--lines"])
        #expect(csv.stdout.hasPrefix(MonthlyStatement.linesCSVHeader + "\n") && csv.stdout.split(separator: "\n").count == 9)
        let text = try LinkoutBinary.run(["statement", "--config", fixture.configPath, "--month", "\(month)", "--app", "com.small"])
        #expect(text.stdout.contains("com.small") && !text.stdout.contains("com.example"), "\(text.stdout)")
        let everyApp = try LinkoutBinary.run(["statement", "--config", fixture.configPath, "--month", "\(month)"]).stdout
        #expect(
            everyApp.contains("(1 sandbox token(s) of the month left out, with their line items: a test purchase owes nothing)"),
            "\(everyApp)")
        #expect(everyApp.contains("  kind  ") && everyApp.contains("  inApp  ") && everyApp.contains("  linkOut  "), "\(everyApp)")
        #expect(try LinkoutBinary.run(["statement", "--config", fixture.configPath, "--month", "2026-13"]).status != 0)

        // Month close: everything of last month old enough is reported now; the next month's token is not.
        #expect(try fixture.report().status == 0)
        let status = try fixture.status()
        let months = status["monthClose"] as? [Body] ?? []
        let last = try #require(months.first { $0["month"] as? String == "\(month)" })
        let current = try #require(months.first { $0["month"] as? String == "\(month.next)" })
        #expect(last["tokens"] as? Int == 5, "a, b, c, d and the last millisecond's")
        #expect(current["tokens"] as? Int == 1)
        #expect(current["deadline"] as? Int == Int(month.next.next.day(16)))
        // The month's last token, created under 72 hours ago or not, and the current one: a month is closed
        // only once every token of it has an accepted report.
        let reported = try fixture.production.accepted().compactMap { $0["externalPurchaseId"] as? String }
        #expect(
            (last["closed"] as? Bool) == Set([a, b, c, d, lastOfMonth]).isSubset(of: Set(reported))
                && (last["outstanding"] as? Int == 0) == (last["closed"] as? Bool))
        let table = try LinkoutBinary.run(["report", "status", "--config", fixture.configPath]).stdout
        #expect(table.contains("month close (every token created in a month reported by its deadline, UTC):"), "\(table)")
        #expect(table.contains("  \(month.next)  "), "\(table)")
    }

    /// A month past its deadline with a token not reported is said in the log and counted by month.
    @Test func anOverdueMonthIsSaidInTheLogAndTheMetrics() throws {
        let fixture = try ReportingFixture(top: Self.commission, apps: Self.apps)
        var server = try fixture.serve(reporting: false)
        let old = Self.month.previous
        _ = try linkOut(fixture, server, created: old.day(2))
        server.stop()
        // Reporting off: the watch counts and says it; the deadline of two months back has passed.
        server = try fixture.serve(reporting: false)
        defer { server.stop() }
        let deadline = Date().addingTimeInterval(10)
        var metrics = ""
        while Date() < deadline {
            metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
            if metrics.contains("linkout_month_close_outstanding{month=\"\(old)\"} 1") { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(metrics.contains("linkout_month_close_outstanding{month=\"\(old)\"} 1"), "\(metrics)")
        #expect(
            try String(contentsOfFile: server.logPath, encoding: .utf8).contains(
                "month close: \(old) has 1 token(s) without an accepted report"))
    }
}
