import LinkOutCore
import Testing

/// When a report Apple refused is sent again on its own: never when Apple's errors name its line items, and
/// with a wait that doubles from the first up to a day, at most `limit` times.
struct RefusalRetryTests {
    static let now: Int64 = 1_800_000_000_000
    static let hour: Int64 = 3_600_000

    static func answer(_ errors: String) -> String { #"{"errors":[\#(errors)]}"# }

    @Test func aNoPurchaseReportMayAlwaysBeApplesState() {
        let body = Self.answer(#"{"errorCode":4000050,"errorMessage":"x","fieldName":"externalPurchaseId"}"#)
        for status in ["NO_LINE_ITEM", "UNRECOGNIZED_TOKEN"] {
            #expect(
                RefusalRetry.nextAttempt(status: status, answer: body, refusals: 1, now: Self.now, firstWaitMs: Self.hour, limit: 8) == Self
                    .now + Self.hour)
        }
    }

    @Test func errorsNamingALineItemAreTheBodys() {
        let byId = Self.answer(#"{"errorCode":4000050,"fieldName":"lineItems","lineItemId":"order-1"}"#)
        let byField = Self.answer(#"{"errorCode":4000050,"fieldName":"lineItems[0].taxAmount"}"#)
        for body in [byId, byField] {
            #expect(
                RefusalRetry.nextAttempt(status: "LINE_ITEM", answer: body, refusals: 1, now: Self.now, firstWaitMs: Self.hour, limit: 8)
                    == nil)
        }
        // The same errors on a report with no lines could only be Apple's.
        #expect(RefusalRetry.mayBeApplesState(status: "NO_LINE_ITEM", errors: ExternalPurchaseReportError.parseErrors(Array(byId.utf8))))
    }

    @Test func aLineItemReportRefusedForSomethingElseMayBeApplesState() {
        let topLevel = Self.answer(#"{"errorCode":4000099,"errorMessage":"entitlement","fieldName":"externalPurchaseId"}"#)
        #expect(RefusalRetry.mayBeApplesState(status: "LINE_ITEM", errors: ExternalPurchaseReportError.parseErrors(Array(topLevel.utf8))))
        // An answer that is not Apple's error shape (a proxy's page) says nothing of the body either.
        #expect(
            RefusalRetry.nextAttempt(status: "LINE_ITEM", answer: "<html>", refusals: 1, now: Self.now, firstWaitMs: Self.hour, limit: 8)
                != nil)
    }

    @Test func theWaitDoublesUpToADayAndStopsAtTheLimit() {
        let waits = (1...9).map { refusals in
            RefusalRetry.nextAttempt(
                status: "NO_LINE_ITEM", answer: "", refusals: refusals, now: Self.now, firstWaitMs: Self.hour, limit: 8
            )
            .map { ($0 - Self.now) / Self.hour }
        }
        #expect(waits == [1, 2, 4, 8, 16, 24, 24, 24, nil])
        #expect(
            RefusalRetry.nextAttempt(status: "NO_LINE_ITEM", answer: "", refusals: 1, now: Self.now, firstWaitMs: Self.hour, limit: 0)
                == nil)
    }
}
