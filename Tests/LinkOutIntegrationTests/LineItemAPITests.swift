import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// The checkout's side: `POST /v1/line-items` and `transactions import`, through to the reports Apple's
/// stand-in accepts.
@Suite(.serialized) struct LineItemAPITests {
    typealias Body = [String: Any]

    /// The line items of the accepted reports for `id`, in order.
    func acceptedLines(_ fixture: ReportingFixture, _ id: String) throws -> [[Body]] {
        try fixture.production.accepted()
            .filter { $0["externalPurchaseId"] as? String == id }
            .map { ($0["body"] as? Body)?["lineItems"] as? [Body] ?? [] }
    }

    @Test func aPurchaseGoesFromTheCheckoutToAnAcceptedLineItemReport() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        let id = try fixture.linkOut(server, ageDays: 0)
        let buy = ReportingFixture.buy("order-1")
        let answer = try fixture.post(server, ["externalPurchaseId": id, "lineItems": [buy]])
        #expect(answer.status == 200, "\(answer.json)")
        #expect((answer.json["lineItems"] as? [Body])?.first?["result"] as? String == "stored")
        let reports = try fixture.production.waitForAccepted(count: 1)
        #expect(reports.first?["status"] as? String == "LINE_ITEM")
        let sent = try acceptedLines(fixture, id).first?.first
        for (key, value) in buy {
            #expect("\(sent?[key] ?? "missing")" == "\(value)", "\(key)")
        }
        #expect(sent?["restatement"] == nil)
        server.stop()
        #expect(try fixture.statusRow()["reported"] as? Int == 1)
        #expect(server.log.contains("key=checkout"), "the key's name is logged")
    }

    /// A client that sends `Expect: 100-continue` (curl does for a body over 1 KiB) is told to go on at
    /// once, not left to wait out its own timer.
    @Test func aClientExpectingContinueIsToldToSendTheBody() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        let id = try fixture.linkOut(server, ageDays: 0)
        let data = try JSONSerialization.data(withJSONObject: ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy("order-1")]])
        let connection = try HTTPConnection(port: server.apiPort)
        try connection.sendRaw(
            "POST /v1/line-items HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Authorization: Bearer \(fixture.apiKey)\r\nExpect: 100-continue\r\nContent-Length: \(data.count)\r\n\r\n")
        let interim = try connection.readResponse()
        #expect(interim.status == 100)
        try connection.sendRaw(Array(data))
        let answer = try connection.readResponse()
        #expect(answer.status == 200, "\(answer.bodyText)")
        server.stop()
    }

    @Test func theSameLinesSentTwiceAreStoredAndReportedOnce() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        let id = try fixture.linkOut(server, ageDays: 0)
        let body: Body = ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy("order-1")]]
        #expect(try fixture.post(server, body).status == 200)
        try fixture.production.waitForAccepted(count: 1)
        let again = try fixture.post(server, body)
        #expect((again.json["lineItems"] as? [Body])?.first?["result"] as? String == "unchanged")
        Thread.sleep(forTimeInterval: 0.6)
        #expect(try fixture.production.reports().count == 1)
        server.stop()
    }

    @Test func aKeyIsRequiredAndOnlyAKnownOne() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        let id = try fixture.linkOut(server, ageDays: 0)
        let body: Body = ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy("order-1")]]
        #expect(try fixture.post(server, body, authorization: "").status == 401)
        #expect(try fixture.post(server, body, authorization: "Bearer not-a-key").status == 401)
        #expect(try fixture.post(server, body, authorization: "Basic \(fixture.apiKey)").status == 401)
        // Nothing was stored by those: the token is still waiting.
        server.stop()
        #expect(try fixture.statusRow()["waiting"] as? Int == 1)
        // The shoppers' listener serves no API.
        let shoppers = try fixture.serve()
        #expect(try shoppers.get("/v1/line-items").status == 404)
        shoppers.stop()
    }

    @Test func everyBrokenRuleIsNamedAndNothingIsStored() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        let id = try fixture.linkOut(server, ageDays: 0)
        var bad = ReportingFixture.buy("order-1")
        bad["amountTaxInclusive"] = 2999
        bad["taxCountry"] = "NL"
        bad["creationDate"] = TokenBuilder.nowMs / 1000
        var foreign = ReportingFixture.buy("order-2")
        foreign["pricingCurrency"] = "ISK"  // not a reporting currency: EUR or USD with a rate
        foreign["reportingCurrency"] = "ISK"
        var refund: Body = ReportingFixture.buy("refund-1")
        refund["eventType"] = "REFUND"
        refund["referenceLineItemId"] = "no-such-line"
        let answer = try fixture.post(
            server, ["externalPurchaseId": id, "lineItems": [bad, ReportingFixture.buy("order-3"), foreign, refund]])
        #expect(answer.status == 400)
        let problems = ReportingFixture.problems(answer.json)
        #expect(
            problems.contains { $0.hasPrefix("lineItems[0].amountTaxInclusive: must equal amountTaxExclusive + taxAmount") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("lineItems[0].taxCountry:") && $0.contains("NLD") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("lineItems[0].creationDate:") && $0.contains("seconds") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("lineItems[2].reportingCurrency:") }, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("lineItems[3].productType:") || $0.hasPrefix("lineItems[3].quantity:") }, "\(problems)")
        #expect(!problems.contains { $0.hasPrefix("lineItems[1]") }, "a good line is not blamed")
        // All or nothing: the good line was not stored either.
        let unknown = try fixture.post(
            server, ["externalPurchaseId": UUID().uuidString.lowercased(), "lineItems": [ReportingFixture.buy("x")]])
        #expect(unknown.status == 404)
        server.stop()
        #expect(try fixture.statusRow()["waiting"] as? Int == 1)
        #expect(try fixture.production.reports().isEmpty)
    }

    @Test func aSubscriptionStartThenItsRenewalGoInTwoReports() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        let id = try fixture.linkOut(server, ageDays: 0)
        let now = TokenBuilder.nowMs
        let month: Int64 = 30 * ReportingFixture.day
        func subscription(_ lineId: String, _ event: String, start: Int64, days: Int, reference: String? = nil) -> Body {
            var line = ReportingFixture.buy(lineId, created: start)
            line["productType"] = "SUBSCRIPTION"
            line["productIdentifier"] = "pro.monthly"
            line["subscriptionEvent"] = event
            line["subscriptionStartDate"] = start
            line["subscriptionEndDate"] = start + month
            line["subscriptionDaysOfPaidService"] = days
            if let reference { line["referenceLineItemId"] = reference }
            return line
        }
        #expect(
            try fixture.post(
                server, ["externalPurchaseId": id, "lineItems": [subscription("sub-1", "SUBSCRIPTION_START", start: now, days: 0)]]
            ).status == 200)
        try fixture.production.waitForAccepted(count: 1)
        let renewal = subscription("sub-2", "RENEWAL", start: now + month, days: 30, reference: "sub-1")
        let answer = try fixture.post(server, ["externalPurchaseId": id, "lineItems": [renewal]])
        // The renewal is dated a month ahead: more than 5 minutes in the future is refused.
        #expect(answer.status == 400)
        let renewedNow = subscription("sub-2", "RENEWAL", start: now, days: 30, reference: "sub-1")
        #expect(try fixture.post(server, ["externalPurchaseId": id, "lineItems": [renewedNow]]).status == 200)
        try fixture.production.waitForAccepted(count: 2)
        let lines = try acceptedLines(fixture, id)
        #expect(lines.map { $0.map { $0["lineItemId"] as? String } } == [["sub-1"], ["sub-2"]])
        #expect(lines.last?.first?["subscriptionDaysOfPaidService"] as? Int == 30)
        server.stop()
    }

    @Test func aRefundARestatementAndAWithdrawalEachGoAsNewReports() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        let id = try fixture.linkOut(server, ageDays: 0)
        #expect(
            try fixture.post(
                server, ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy("order-1"), ReportingFixture.buy("order-2")]]
            ).status == 200)
        try fixture.production.waitForAccepted(count: 1)

        // A refund of part of order-1.
        var refund: Body = [
            "lineItemId": "refund-1", "referenceLineItemId": "order-1", "creationDate": TokenBuilder.nowMs, "eventType": "REFUND",
            "pricingCurrency": "EUR", "reportingCurrency": "EUR", "amountTaxExclusive": 1000, "amountTaxInclusive": 1210,
            "netAmountTaxExclusive": 1000, "taxAmount": 210, "taxCountry": "NLD",
        ]
        #expect(try fixture.post(server, ["externalPurchaseId": id, "lineItems": [refund]]).status == 200)
        try fixture.production.waitForAccepted(count: 2)

        // order-2 restated with a new net amount, keeping its creation date.
        var restated = try #require(try acceptedLines(fixture, id).first?.first { $0["lineItemId"] as? String == "order-2" })
        restated["netAmountTaxExclusive"] = 2000
        restated["restatement"] = true
        #expect(try fixture.post(server, ["externalPurchaseId": id, "lineItems": [restated]]).status == 200)
        try fixture.production.waitForAccepted(count: 3)

        // The refund withdrawn: it was sent by mistake.
        refund["restatement"] = true
        refund["erroneouslySubmitted"] = true
        #expect(try fixture.post(server, ["externalPurchaseId": id, "lineItems": [refund]]).status == 200)
        try fixture.production.waitForAccepted(count: 4)
        server.stop()

        let lines = try acceptedLines(fixture, id)
        #expect(lines.count == 4)
        #expect(lines[1].first?["eventType"] as? String == "REFUND")
        #expect(lines[1].first?["restatement"] == nil)
        #expect(lines[2].first?["lineItemId"] as? String == "order-2")
        #expect(lines[2].first?["restatement"] as? Bool == true)
        #expect(lines[2].first?["netAmountTaxExclusive"] as? Int == 2000)
        #expect(lines[3].first?["erroneouslySubmitted"] as? Bool == true)
        #expect(lines[3].first?["restatement"] as? Bool == true)
        // Every report a new requestIdentifier.
        #expect(Set(try fixture.production.accepted().compactMap { $0["requestIdentifier"] as? String }).count == 4)
    }

    @Test func theSignedReferenceStandsForTheToken() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        let id = UUID().uuidString.lowercased()
        let response = try server.get(TokenBuilder.linkOut(token: TokenBuilder.minted(id: id)))
        let location = try #require(response[header: "Location"])
        let reference = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "linkoutRef" }?.value)
        #expect(try fixture.post(server, ["linkoutRef": reference, "lineItems": [ReportingFixture.buy("order-1")]]).status == 200)
        let forged = try fixture.post(server, ["linkoutRef": reference.dropLast(2) + "AA", "lineItems": [ReportingFixture.buy("order-2")]])
        #expect(forged.status == 400)
        #expect(ReportingFixture.problems(forged.json).first?.hasPrefix("linkoutRef:") == true)
        try fixture.production.waitForAccepted(count: 1)
        #expect(try fixture.production.accepted().first?["externalPurchaseId"] as? String == id)
        server.stop()
    }

    @Test func aPurchaseAfterANoLineItemReportGoesInALineItemReport() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve()
        let id = try fixture.linkOut(server, ageDays: 4)
        try fixture.production.waitForAccepted(count: 1)
        #expect(try fixture.post(server, ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy("late-1")]]).status == 200)
        let accepted = try fixture.production.waitForAccepted(count: 2)
        #expect(accepted.map { $0["status"] as? String } == ["NO_LINE_ITEM", "LINE_ITEM"])
        server.stop()
        // And never back: a LINE_ITEM token gets no NO_LINE_ITEM however long it waits (Apple refuses it).
        try fixture.report()
        #expect(try fixture.production.reports().count == 2)
    }

    @Test func transactionsImportStoresEachGoodLineAndNamesEachBadOne() throws {
        let fixture = try ReportingFixture()
        let server = try fixture.serve(reporting: false)
        let first = try fixture.linkOut(server, ageDays: 0)
        let second = try fixture.linkOut(server, ageDays: 0)
        server.stop()
        var bad = ReportingFixture.buy("order-b")
        bad["taxCountry"] = "XX"
        func line(_ body: Body) throws -> String { String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self) }
        let good = try line(["externalPurchaseId": first, "lineItems": [ReportingFixture.buy("order-a")]])
        let file = fixture.folder.write(
            "export.jsonl",
            [
                good,
                "",
                try line(["externalPurchaseId": second, "lineItems": [bad]]),
                good,
            ].joined(separator: "\n") + "\n")
        let result = try LinkoutBinary.run(["transactions", "import", "--config", fixture.configPath, file])
        #expect(result.status == 1)
        #expect(result.stdout.contains("1 line items stored, 0 restated, 1 already stored; 1 lines refused"), "\(result.stdout)")
        #expect(result.stderr.contains("export.jsonl:3: lineItems[0].taxCountry"), "\(result.stderr)")
        let run = try fixture.report()
        #expect(run.stdout.contains("1 accepted"), "\(run.stdout) \(run.stderr)")
        #expect(try acceptedLines(fixture, first).first?.first?["lineItemId"] as? String == "order-a")
    }

    /// `transactions import` into a folder no linkout has served yet creates the store as `serve` would,
    /// rather than refusing it: a line for a token the new store has not got is then refused as unknown.
    @Test func transactionsImportIntoANewStoreCreatesIt() throws {
        let fixture = try ReportingFixture()
        try #require(!FileManager.default.fileExists(atPath: fixture.storePath))
        let line = String(
            decoding: try JSONSerialization.data(
                withJSONObject: [
                    "externalPurchaseId": UUID().uuidString.lowercased(), "lineItems": [ReportingFixture.buy("order-a")],
                ] as Body), as: UTF8.self)
        let file = fixture.folder.write("export.jsonl", line + "\n")
        let result = try LinkoutBinary.run(["transactions", "import", "--config", fixture.recordOnlyConfigPath, file])
        #expect(result.stderr.hasPrefix("note: created a new store at \(fixture.storePath)\n"), "\(result.stderr)")
        #expect(result.stdout.contains("0 line items stored, 0 restated, 0 already stored; 1 lines refused"), "\(result.stdout)")
        let export = try LinkoutBinary.run(["tokens", "export", "--config", fixture.recordOnlyConfigPath, "--format", "csv"])
        #expect(export.status == 0 && export.stdout.split(separator: "\n").count == 1, "the header only: \(export.stdout) \(export.stderr)")
    }
}
