import Foundation
import Testing

@testable import LinkOutCore

/// Report bodies made from stored lines, read back with Foundation's JSON decoder.
@Suite("ReportBody")
struct ReportBodyTests {
    typealias S = LineItemSamples
    static let requestIdentifier = "a4e1d2c3-0000-4000-8000-000000000001"
    static let purchaseId = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"

    static func line(_ fields: S.Fields, acceptedBefore: Bool) -> ReportBody.Line {
        ReportBody.Line(json: S.object(fields), acceptedBefore: acceptedBefore)
    }

    static let withdrawal = S.edit(S.oneTimeBuy, set: ["restatement": "true", "erroneouslySubmitted": "true"])

    static func report(_ status: ExternalPurchaseReportStatus, _ lines: [ReportBody.Line]) throws -> [String: Any] {
        let text = ReportBody.make(requestIdentifier: requestIdentifier, externalPurchaseId: purchaseId, status: status, lines: lines)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    static func items(_ report: [String: Any]) throws -> [[String: Any]] {
        try #require(report["lineItems"] as? [[String: Any]])
    }

    @Test("a line Apple never took goes without restatement, one it took goes as a restatement")
    func restatement() throws {
        let report = try Self.report(
            .lineItem,
            [
                Self.line(S.oneTimeBuy, acceptedBefore: false),
                Self.line(S.subscriptionStart, acceptedBefore: true),
            ])
        #expect(report["requestIdentifier"] as? String == Self.requestIdentifier)
        #expect(report["externalPurchaseId"] as? String == Self.purchaseId)
        #expect(report["status"] as? String == "LINE_ITEM")
        let items = try Self.items(report)
        #expect(items.map { $0["lineItemId"] as? String } == ["buy-1", "sub-1"])
        #expect(items[0]["restatement"] == nil)
        #expect(items[1]["restatement"] as? Bool == true)
        #expect(items[0]["amountTaxInclusive"] as? Int == 1210)
    }

    @Test("the checkout's restatement flag on a line Apple never took is dropped: it goes as new")
    func restatedBeforeFirstReport() throws {
        let restated = S.edit(S.oneTimeBuy, set: ["restatement": "true"])
        let items = try Self.items(try Self.report(.lineItem, [Self.line(restated, acceptedBefore: false)]))
        #expect(items.count == 1)
        #expect(items[0]["restatement"] == nil)
    }

    @Test("a withdrawal of a line Apple never took is left out; alone, nothing is sendable")
    func withdrawalNeverAccepted() throws {
        let withdrawal = Self.line(Self.withdrawal, acceptedBefore: false)
        let kept = Self.line(S.subscriptionStart, acceptedBefore: false)
        let items = try Self.items(try Self.report(.lineItem, [withdrawal, kept]))
        #expect(items.map { $0["lineItemId"] as? String } == ["sub-1"])
        #expect(ReportBody.hasSendableLines([withdrawal, kept]))
        #expect(!ReportBody.hasSendableLines([withdrawal]))
        #expect(!ReportBody.hasSendableLines([]))
    }

    @Test("a withdrawal of a line Apple took goes, as restatement and erroneouslySubmitted")
    func withdrawalAccepted() throws {
        let withdrawal = Self.line(Self.withdrawal, acceptedBefore: true)
        #expect(ReportBody.hasSendableLines([withdrawal]))
        let items = try Self.items(try Self.report(.lineItem, [withdrawal]))
        #expect(items.count == 1)
        #expect(items[0]["restatement"] as? Bool == true)
        #expect(items[0]["erroneouslySubmitted"] as? Bool == true)
    }

    @Test("NO_LINE_ITEM carries no lineItems, whatever lines are stored")
    func noLineItem() throws {
        let report = try Self.report(.noLineItem, [Self.line(S.oneTimeBuy, acceptedBefore: false)])
        #expect(report["status"] as? String == "NO_LINE_ITEM")
        #expect(report["lineItems"] == nil)
        #expect(Set(report.keys) == ["requestIdentifier", "externalPurchaseId", "status"])
    }
}
