import Foundation
import LinkOutTestSupport
import Testing

@testable import LinkOutCore

@Suite("ExternalPurchaseReport")
struct ExternalPurchaseReportTests {
    typealias S = LineItemSamples
    static let requestIdentifier = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"

    static func reports() throws -> [ExternalPurchaseReport] {
        let items = try S.items([
            S.oneTimeBuy, S.subscriptionStart, S.renewal, S.refund,
            S.edit(
                S.oneTimeBuy,
                set: [
                    "lineItemId": "\"buy-2\"", "pricingCurrency": "\"ISK\"", "exchangeRate": "0.0071",
                    "restatement": "true", "erroneouslySubmitted": "true",
                ]),
        ])
        return [
            ExternalPurchaseReport(
                requestIdentifier: requestIdentifier, externalPurchaseId: "token-a", status: .lineItem, lineItems: items),
            ExternalPurchaseReport(requestIdentifier: requestIdentifier, externalPurchaseId: "token-b", status: .noLineItem),
            ExternalPurchaseReport(requestIdentifier: requestIdentifier, externalPurchaseId: "SANDBOX-c", status: .unrecognizedToken),
            ExternalPurchaseReport(requestIdentifier: requestIdentifier, externalPurchaseId: "token-d", status: .duplicateToken),
        ]
    }

    @Test("the body: fields in order, lineItems only with LINE_ITEM")
    func body() throws {
        let reports = try Self.reports()
        #expect(
            String(decoding: reports[1].json, as: UTF8.self)
                == "{\"requestIdentifier\":\"\(Self.requestIdentifier)\",\"externalPurchaseId\":\"token-b\",\"status\":\"NO_LINE_ITEM\"}")
        let text = String(decoding: reports[0].json, as: UTF8.self)
        #expect(
            text.hasPrefix(
                "{\"requestIdentifier\":\"\(Self.requestIdentifier)\",\"externalPurchaseId\":\"token-a\",\"status\":\"LINE_ITEM\",\"lineItems\":[{\"lineItemId\":\"buy-1\""
            ))
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
        #expect(
            ExternalPurchaseReportError.parseErrors(Array(body.utf8)) == [
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

/// The emitted bodies checked by a validator nobody here wrote: Python's `jsonschema` against the schema in
/// docs/apple, written from Apple's documentation. A missing python3 or jsonschema fails the test (install
/// them with scripts/install-deps) rather than skipping it.
@Suite("ExternalPurchaseReport against the JSON schema")
struct ExternalPurchaseReportSchemaTests {
    static let schema = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/apple/external-purchase-report.schema.json")

    /// Prints one line per body, `NAME ok` or `NAME invalid: KEYWORD at /PATH, …` (keywords and paths, not
    /// jsonschema's wording, which changes between versions).
    static let script = """
        import json, sys
        from jsonschema import Draft202012Validator
        schema = json.load(open(sys.argv[1]))
        Draft202012Validator.check_schema(schema)
        validator = Draft202012Validator(schema)
        for path in sorted(sys.argv[2:]):
            errors = sorted(validator.iter_errors(json.load(open(path))), key=lambda e: list(e.path))
            name = path.rsplit('/', 1)[-1]
            where = lambda e: '/' + '/'.join(str(part) for part in e.absolute_path)
            print(name + (' ok' if not errors else ' invalid: ' + ', '.join(e.validator + ' at ' + where(e) for e in errors)))
        """

    /// Writes `bodies` to a fresh folder and returns what the validator printed for each, by file name.
    static func validate(_ bodies: [String: [UInt8]]) throws -> [String] {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("linkout-report-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var paths: [String] = []
        for (name, body) in bodies {
            let url = folder.appendingPathComponent(name)
            try Data(body).write(to: url)
            paths.append(url.path)
        }
        let result = try Command.python(["-c", script, schema.path] + paths)
        #expect(result.status == 0, "python3 with jsonschema failed (run scripts/install-deps): \(result.stderr)")
        return result.stdoutText.split(separator: "\n").map(String.init)
    }

    @Test("every body linkout emits is valid, and broken ones are caught")
    func schema() throws {
        let reports = try ExternalPurchaseReportTests.reports()
        var bodies: [String: [UInt8]] = [:]
        for (index, report) in reports.enumerated() { bodies["report-\(index).json"] = report.json }
        // Bodies the schema must refuse, so a validator that accepts everything cannot pass this test.
        let withLines = String(decoding: reports[0].json, as: UTF8.self)
        bodies["x-lines-on-no-line-item.json"] = Array(withLines.replacingOccurrences(of: "\"LINE_ITEM\"", with: "\"NO_LINE_ITEM\"").utf8)
        bodies["x-refund-with-quantity.json"] = Array(
            withLines.replacingOccurrences(
                of: "\"eventType\":\"REFUND\",", with: "\"eventType\":\"REFUND\",\"quantity\":1,"
            ).utf8)
        bodies["x-seconds.json"] = Array(withLines.replacingOccurrences(of: "\(S.now - S.hour)", with: "\((S.now - S.hour) / 1000)").utf8)

        let verdicts = try Self.validate(bodies)
        #expect(
            verdicts == [
                "report-0.json ok", "report-1.json ok", "report-2.json ok", "report-3.json ok",
                "x-lines-on-no-line-item.json invalid: not at /",
                "x-refund-with-quantity.json invalid: oneOf at /lineItems/3",
                "x-seconds.json invalid: oneOf at /lineItems/0, oneOf at /lineItems/2, oneOf at /lineItems/4",
            ])
    }

    typealias S = LineItemSamples
}
