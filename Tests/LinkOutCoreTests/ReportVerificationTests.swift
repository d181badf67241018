import Testing

@testable import LinkOutCore

/// `report verify`'s rules without a network: comparing Apple's copy with what was sent, reading Apple's
/// answer to a GET, pacing the requests, and the month it selects by.
@Suite("Report verification")
struct ReportVerificationTests {
    static func json(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    static let sent = """
        {"requestIdentifier":"r1","externalPurchaseId":"t1","status":"LINE_ITEM","lineItems":[
          {"lineItemId":"a","amountTaxInclusive":2990,"exchangeRate":1.10,"taxCountry":"NLD"},
          {"lineItemId":"b","amountTaxInclusive":500,"taxCountry":"DEU"}]}
        """

    @Test("the same JSON value, whatever the member order, line order and number spelling, is no difference")
    func sameValue() throws {
        let held = """
            {"lineItems":[{"taxCountry":"DEU","amountTaxInclusive":500.0,"lineItemId":"b"},
              {"exchangeRate":1.1,"lineItemId":"a","taxCountry":"NLD","amountTaxInclusive":2.99e3}],
             "status":"LINE_ITEM","externalPurchaseId":"t1","requestIdentifier":"r1"}
            """
        #expect(ReportComparison.differences(sent: try Self.json(Self.sent), held: try Self.json(held)).isEmpty)
    }

    @Test("changed, missing and extra fields, named by lineItemId, in the sent body's order")
    func differences() throws {
        let held = """
            {"requestIdentifier":"r1","externalPurchaseId":"t1","status":"NO_LINE_ITEM","lineItems":[
              {"lineItemId":"a","amountTaxInclusive":2991,"exchangeRate":1.10,"receivedBy":"apple"},
              {"lineItemId":"c","amountTaxInclusive":1}]}
            """
        let found = ReportComparison.differences(sent: try Self.json(Self.sent), held: try Self.json(held))
        #expect(
            found == [
                ReportDifference(path: "status", kind: .changed, sent: .string("LINE_ITEM"), held: .string("NO_LINE_ITEM")),
                ReportDifference(
                    path: "lineItems[lineItemId=a].amountTaxInclusive", kind: .changed, sent: .integer(2990), held: .integer(2991)),
                ReportDifference(path: "lineItems[lineItemId=a].taxCountry", kind: .missing, sent: .string("NLD"), held: nil),
                ReportDifference(path: "lineItems[lineItemId=a].receivedBy", kind: .extra, sent: nil, held: .string("apple")),
                ReportDifference(
                    path: "lineItems[lineItemId=b]", kind: .missing,
                    sent: try Self.json(#"{"lineItemId":"b","amountTaxInclusive":500,"taxCountry":"DEU"}"#), held: nil),
                ReportDifference(
                    path: "lineItems[lineItemId=c]", kind: .extra, sent: nil,
                    held: try Self.json(#"{"lineItemId":"c","amountTaxInclusive":1}"#)),
            ])
    }

    @Test("a number and a string, or 1 and 1.5, differ; arrays without lineItemIds compare by position")
    func kindsAndPositions() throws {
        #expect(ReportComparison.differences(sent: try Self.json(#"{"a":1}"#), held: try Self.json(#"{"a":"1"}"#)).map(\.path) == ["a"])
        #expect(ReportComparison.differences(sent: try Self.json(#"{"a":1}"#), held: try Self.json(#"{"a":1.5}"#)).count == 1)
        #expect(ReportComparison.differences(sent: try Self.json(#"{"a":true}"#), held: try Self.json(#"{"a":1}"#)).count == 1)
        let found = ReportComparison.differences(sent: try Self.json(#"{"x":[1,2]}"#), held: try Self.json(#"{"x":[2,1,3]}"#))
        #expect(found.map(\.path) == ["x[0]", "x[1]", "x[2]"])
        #expect(found.map(\.kind) == [.changed, .changed, .extra])
        // Two lines sharing an id cannot be matched by it: by position instead.
        let twice = #"{"lineItems":[{"lineItemId":"a","n":1},{"lineItemId":"a","n":2}]}"#
        let swapped = #"{"lineItems":[{"lineItemId":"a","n":2},{"lineItemId":"a","n":1}]}"#
        #expect(
            ReportComparison.differences(sent: try Self.json(twice), held: try Self.json(swapped)).map(\.path)
                == ["lineItems[0].n", "lineItems[1].n"])
        #expect(ReportComparison.differences(sent: try Self.json(#"{"a":1}"#), held: try Self.json("[]")).map(\.path) == ["(report)"])
    }

    @Test("Apple's answer to a GET")
    func lookupAnswers() throws {
        let now: Int64 = 1_760_000_000_000
        func classify(_ status: Int?, _ body: String = "", retryAfter: String? = nil) -> ReportLookupAnswer {
            ReportLookupAnswer.classify(status: status, body: body, retryAfter: retryAfter, now: now, transportError: "timed out")
        }
        #expect(classify(200, #"{"a":1}"#) == .held(try Self.json(#"{"a":1}"#)))
        #expect(classify(200, "<html>") == .held(nil))
        #expect(classify(404) == .notHeld)
        #expect(classify(401) == .unauthorized && classify(403) == .unauthorized)
        #expect(classify(429, retryAfter: String(now + 3000)) == .retry(afterMs: 3000, why: "HTTP 429 rate limited"))
        #expect(classify(429, retryAfter: "2") == .retry(afterMs: 2000, why: "HTTP 429 rate limited"))
        #expect(classify(429) == .retry(afterMs: nil, why: "HTTP 429 rate limited"))
        #expect(classify(503) == .retry(afterMs: nil, why: "HTTP 503"))
        #expect(classify(nil) == .retry(afterMs: nil, why: "timed out"))
        #expect(classify(400, "bad") == .unreadable(why: "HTTP 400 bad"))
    }

    @Test("pacing: the interval between requests, Retry-After, and a backoff doubling to a minute")
    func pacing() {
        var pacing = VerifyPacing(perSecond: 4)
        #expect(pacing.intervalMs == 250)
        #expect(pacing.wait(now: 1_000) == 0)
        pacing.asked(at: 1_000)
        #expect(pacing.wait(now: 1_100) == 150)
        pacing.answered()
        pacing.asked(at: 1_250)
        #expect(pacing.failed(at: 1_260, retryAfterMs: 5_000) == 5_000)
        #expect(pacing.wait(now: 1_260) == 5_000)
        pacing.asked(at: 6_260)
        #expect(pacing.failed(at: 6_300, retryAfterMs: nil) == 2_000, "the second failure in a row")
        #expect(pacing.failed(at: 6_300, retryAfterMs: nil) == 4_000)
        for _ in 0..<10 { pacing.failed(at: 6_300, retryAfterMs: nil) }
        #expect(pacing.failed(at: 6_300, retryAfterMs: nil) == VerifyPacing.maximumBackoffMs)
        pacing.answered()
        #expect(pacing.failuresInRow == 0)
        #expect(VerifyPacing(perSecond: 3).intervalMs == 334, "never faster than asked")
    }

    @Test("a month is YYYY-MM, from its first millisecond to the next month's")
    func months() throws {
        let may = try #require(UTCMonth("2026-05"))
        #expect(may.milliseconds == UTCDate.parse("2026-05-01")!..<UTCDate.parse("2026-06-01")!)
        #expect(may.description == "2026-05")
        #expect(UTCMonth("2026-12")?.milliseconds.upperBound == UTCDate.parse("2027-01-01"))
        #expect(UTCMonth("2024-02")?.milliseconds.count == 29 * 86_400_000)
        for bad in ["2026-13", "2026-00", "2026-5", "26-05", "2026/05", "2026-05-01", "", "abcd-ef", "1969-12", "２０２６-05"] {
            #expect(UTCMonth(bad) == nil, "\(bad)")
        }
    }
}
