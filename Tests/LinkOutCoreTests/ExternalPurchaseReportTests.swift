import Testing
@testable import LinkOutCore

@Suite("ExternalPurchaseReport")
struct ExternalPurchaseReportTests {
    typealias S = LineItemSamples
    static let requestIdentifier = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"

    static func reports() throws -> [ExternalPurchaseReport] {
        let items = try S.items([
            S.oneTimeBuy, S.subscriptionStart, S.renewal, S.refund,
            S.edit(S.oneTimeBuy, set: [
                "lineItemId": "\"buy-2\"", "pricingCurrency": "\"ISK\"", "exchangeRate": "0.0071",
                "restatement": "true", "erroneouslySubmitted": "true",
            ]),
        ])
        return [
            ExternalPurchaseReport(requestIdentifier: requestIdentifier, externalPurchaseId: "token-a", status: .lineItem, lineItems: items),
            ExternalPurchaseReport(requestIdentifier: requestIdentifier, externalPurchaseId: "token-b", status: .noLineItem),
            ExternalPurchaseReport(requestIdentifier: requestIdentifier, externalPurchaseId: "SANDBOX-c", status: .unrecognizedToken),
            ExternalPurchaseReport(requestIdentifier: requestIdentifier, externalPurchaseId: "token-d", status: .duplicateToken),
        ]
    }

    @Test("the body: fields in order, lineItems only with LINE_ITEM")
    func body() throws {
        let reports = try Self.reports()
        #expect(String(decoding: reports[1].json, as: UTF8.self) ==
            "{\"requestIdentifier\":\"\(Self.requestIdentifier)\",\"externalPurchaseId\":\"token-b\",\"status\":\"NO_LINE_ITEM\"}")
        let text = String(decoding: reports[0].json, as: UTF8.self)
        #expect(text.hasPrefix("{\"requestIdentifier\":\"\(Self.requestIdentifier)\",\"externalPurchaseId\":\"token-a\",\"status\":\"LINE_ITEM\",\"lineItems\":[{\"lineItemId\":\"buy-1\""))
        guard case .object(let members) = try JSONValue.parse(reports[0].json),
            case .array(let lines)? = members.last?.value
        else {
            Issue.record("not an object ending in an array")
            return
        }
        #expect(lines.count == 5)
    }

    @Test("Apple's error body is read tolerantly")
    func errors() {
        let body = """
        {"errors":[{"errorCode":1,"errorMessage":"Duplicate","fieldName":"requestIdentifier"},
        {"lineItemId":"buy-1","errorCode":"4000023","extra":true},{"errorMessage":7},3]}
        """
        #expect(ExternalPurchaseReportError.parseErrors(Array(body.utf8)) == [
            ExternalPurchaseReportError(errorCode: 1, errorMessage: "Duplicate", fieldName: "requestIdentifier"),
            ExternalPurchaseReportError(errorCode: 4_000_023, lineItemId: "buy-1"),
            ExternalPurchaseReportError(),
        ])
        #expect(ExternalPurchaseReportError.parseErrors(Array("{\"errors\":[]}".utf8)) == [])
        #expect(ExternalPurchaseReportError.parseErrors(Array("<html>".utf8)) == nil)
        #expect(ExternalPurchaseReportError.parseErrors(Array("{\"error\":\"x\"}".utf8)) == nil)
        #expect(ExternalPurchaseReportError(errorCode: 1, fieldName: "requestIdentifier").description == "code 1, field requestIdentifier")
    }
}
