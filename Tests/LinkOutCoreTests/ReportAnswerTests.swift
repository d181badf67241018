import Testing

@testable import LinkOutCore

/// Every branch of the reporter's reading of Apple's answers, without a network.
@Suite("ReportAnswer")
struct ReportAnswerTests {
    static let now: Int64 = 1_760_000_000_000
    static let first: Int64 = 10_000

    static func classify(
        _ status: Int?, body: String = "", retryAfter: String? = nil, failures: Int = 1, transportError: String = ""
    ) -> ReportAnswer {
        ReportAnswer.classify(
            status: status, body: body, retryAfter: retryAfter, failures: failures, now: now, firstBackoffMs: first,
            transportError: transportError)
    }

    static let duplicate = #"{"errors":[{"errorCode":4000001,"errorMessage":"DuplicateValueError","fieldName":"requestIdentifier"}]}"#

    @Test("200 is accepted")
    func accepted() {
        #expect(Self.classify(200, body: #"{"requestIdentifier":"x"}"#) == .accepted)
    }

    @Test("401 stops sending: unauthorized")
    func unauthorized() {
        #expect(Self.classify(401) == .unauthorized)
        #expect(Self.classify(401, body: #"{"errors":[]}"#, failures: 5) == .unauthorized)
    }

    @Test("400 naming requestIdentifier as a duplicate is read back, not failed")
    func duplicate() {
        #expect(Self.classify(400, body: Self.duplicate) == .confirmDuplicate)
    }

    @Test("400 with other errors fails the report and keeps Apple's body")
    func failed() {
        let body =
            #"{"errors":[{"errorCode":4000023,"errorMessage":"InvalidLineItem","fieldName":"lineItems[0].taxCountry","lineItemId":"buy-1"}]}"#
        #expect(Self.classify(400, body: body) == .failed(errors: body))
        // Apple's wording alone does not make a duplicate: the field does.
        let wording = #"{"errors":[{"errorCode":4000001,"errorMessage":"DuplicateValueError","fieldName":"lineItems[0].lineItemId"}]}"#
        #expect(Self.classify(400, body: wording) == .failed(errors: wording))
        #expect(Self.classify(400, body: "") == .failed(errors: "HTTP 400 without a body"))
        #expect(Self.classify(400, body: "not json") == .failed(errors: "not json"))
    }

    @Test("429 with Retry-After as a Unix time in ms waits until then")
    func retryAfterDate() {
        #expect(Self.classify(429, retryAfter: String(Self.now + 7_500)) == .retry(afterMs: 7_500, why: "429 rate limited"))
        // Bounded: never less than a second, never more than an hour.
        #expect(Self.classify(429, retryAfter: String(Self.now - 60_000)) == .retry(afterMs: 1_000, why: "429 rate limited"))
        #expect(Self.classify(429, retryAfter: String(Self.now + 86_400_000)) == .retry(afterMs: 3_600_000, why: "429 rate limited"))
    }

    @Test("429 with Retry-After in seconds waits that many seconds")
    func retryAfterSeconds() {
        #expect(Self.classify(429, retryAfter: "3") == .retry(afterMs: 3_000, why: "429 rate limited"))
        #expect(Self.classify(429, retryAfter: " 3 ") == .retry(afterMs: 3_000, why: "429 rate limited"))
    }

    @Test("429 without a usable Retry-After backs off as a 5xx would")
    func retryAfterAbsent() {
        #expect(Self.classify(429) == .retry(afterMs: Self.first, why: "429 rate limited"))
        #expect(Self.classify(429, retryAfter: "soon", failures: 2) == .retry(afterMs: 2 * Self.first, why: "429 rate limited"))
    }

    @Test("500 and 503 retry, the wait doubling per attempt", arguments: [500, 503])
    func serverErrors(_ status: Int) {
        #expect(Self.classify(status, failures: 1) == .retry(afterMs: Self.first, why: "HTTP \(status)"))
        #expect(Self.classify(status, failures: 2) == .retry(afterMs: 2 * Self.first, why: "HTTP \(status)"))
        #expect(Self.classify(status, failures: 3) == .retry(afterMs: 4 * Self.first, why: "HTTP \(status)"))
    }

    @Test("the backoff stops at an hour, however many attempts")
    func backoffCap() {
        #expect(ReportAnswer.backoff(failures: 9, first: Self.first) == 2_560_000)
        #expect(ReportAnswer.backoff(failures: 10, first: Self.first) == ReportAnswer.maximumBackoffMs)
        #expect(ReportAnswer.backoff(failures: 1_000, first: Self.first) == 3_600_000)
        #expect(Self.classify(500, failures: 1_000) == .retry(afterMs: 3_600_000, why: "HTTP 500"))
        #expect(ReportAnswer.backoff(failures: 0, first: Self.first) == Self.first)
    }

    @Test("no answer retries with the transport error as the reason")
    func noAnswer() {
        #expect(
            Self.classify(nil, transportError: "Couldn't connect to server")
                == .retry(afterMs: Self.first, why: "Couldn't connect to server"))
        #expect(Self.classify(nil, failures: 3) == .retry(afterMs: 4 * Self.first, why: "no answer"))
    }
}
