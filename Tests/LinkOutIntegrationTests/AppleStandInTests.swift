import Crypto
import Foundation
import LinkOutTestSupport
import Testing

/// The Apple stand-in must refuse what Apple refuses, or tests of linkout's reporting against it prove
/// nothing. Each refusal is paired with the same request made right, accepted, so a stand-in that refuses
/// everything fails too. JWTs are signed here with swift-crypto, as linkout's client will, and requests
/// sent with curl, so neither side of a verdict is the stand-in's own Python.
@Suite struct AppleStandInTests {
    @Test func aJWTSignedByAnotherKeyIsRefused() throws {
        let apple = try AppleStandIn(.production)
        let report = noLineItem("tok-other-key")
        let stranger = P256.Signing.PrivateKey()
        let refused = try put(apple, report, jwt: try makeJWT(apple, key: stranger))
        #expect(refused.status == 401)
        #expect(refused.problems.contains { $0.contains("signature does not verify") }, "\(refused.body)")

        #expect(try put(apple, report, jwt: try makeJWT(apple)).status == 200)
    }

    @Test func aJWTLivingTwoHoursIsRefused() throws {
        let apple = try AppleStandIn(.production)
        let report = noLineItem("tok-lifetime")
        let refused = try put(apple, report, jwt: try makeJWT(apple, lifetime: 7200))
        #expect(refused.status == 401)
        #expect(refused.problems.contains { $0.contains("more than Apple's 3600 s") }, "\(refused.body)")

        // Apple's limit itself is allowed.
        #expect(try put(apple, report, jwt: try makeJWT(apple, lifetime: 3600)).status == 200)
    }

    @Test func bodiesOutsideTheSchemaAreRefused() throws {
        let apple = try AppleStandIn(.production)
        let jwt = try makeJWT(apple)

        var item = oneTimeBuy("line-1")
        item["amountTaxInclusive"] = 12.1  // milli-units are integers: 12100
        let float = try put(apple, lineItems("tok-schema", [item]), jwt: jwt)
        #expect(float.status == 400)
        #expect(float.errors.first?["errorCode"] as? Int == 4000023)
        #expect(float.errors.first?["fieldName"] as? String == "lineItems[0].amountTaxInclusive", "\(float.body)")
        #expect(float.errors.first?["lineItemId"] as? String == "line-1")

        var missing = noLineItem("tok-schema")
        missing["status"] = nil
        let noStatus = try put(apple, missing, jwt: jwt)
        #expect(noStatus.status == 400)
        #expect(noStatus.errors.first?["fieldName"] as? String == "status", "\(noStatus.body)")

        let records = try apple.reports()
        #expect(records.count == 2)
        #expect(records.allSatisfy { $0["accepted"] as? Bool == false && !(($0["problems"] as? [String]) ?? []).isEmpty })

        #expect(try put(apple, lineItems("tok-schema", [oneTimeBuy("line-1")]), jwt: jwt).status == 200)
    }

    @Test func anAcceptedReportIsListedReadableAndADuplicateWhenResent() throws {
        let apple = try AppleStandIn(.production)
        let jwt = try makeJWT(apple)
        let report = noLineItem("tok-accepted")
        let identifier = report["requestIdentifier"] as! String

        let sent = try put(apple, report, jwt: jwt)
        #expect(sent.status == 200)
        #expect((sent.json as? [String: Any])?["requestIdentifier"] as? String == identifier)
        let accepted = try apple.waitForAccepted(count: 1)
        #expect(accepted.first?["requestIdentifier"] as? String == identifier)
        #expect((accepted.first?["jwtClaims"] as? [String: Any])?["bid"] as? String == bundleId)

        let resent = try put(apple, report, jwt: jwt)
        #expect(resent.status == 400)
        #expect(resent.errors.first?["errorCode"] as? Int == 4000001)
        #expect(resent.errors.first?["fieldName"] as? String == "requestIdentifier")
        #expect(try apple.accepted().count == 1)

        let read = try send(apple, "GET", "/externalPurchase/v1/reports/" + identifier, jwt: jwt)
        #expect(read.status == 200)
        let readBack = read.json as? [String: Any]
        #expect(readBack?["externalPurchaseId"] as? String == "tok-accepted")
        #expect(readBack?["status"] as? String == "NO_LINE_ITEM")
        #expect(try send(apple, "GET", "/externalPurchase/v1/reports/" + UUID().uuidString, jwt: jwt).status == 404)
    }

    @Test func eachEnvironmentTakesOnlyItsOwnTokens() throws {
        let production = try AppleStandIn(.production)
        let sandbox = try AppleStandIn(.sandbox)
        let sandboxToken = noLineItem("SANDBOX-tok")
        let productionToken = noLineItem("tok-production")

        #expect(try put(production, sandboxToken, jwt: try makeJWT(production)).status == 400)
        #expect(try put(sandbox, productionToken, jwt: try makeJWT(sandbox)).status == 400)
        #expect(try put(sandbox, sandboxToken, jwt: try makeJWT(sandbox)).status == 200)
        #expect(try put(production, productionToken, jwt: try makeJWT(production)).status == 200)
    }

    @Test func aRegisteredTokenNeedsItsAppsBundleId() throws {
        let apple = try AppleStandIn(.production)
        try apple.register(externalPurchaseId: "tok-registered", bundleId: "com.example.other")
        let report = noLineItem("tok-registered")
        let refused = try put(apple, report, jwt: try makeJWT(apple))
        #expect(refused.status == 401)
        #expect(refused.problems.contains { $0.contains("com.example.other") }, "\(refused.body)")

        #expect(try put(apple, report, jwt: try makeJWT(apple, bundleId: "com.example.other")).status == 200)
    }

    @Test func aTokenWithLineItemsCannotFallBackToNoLineItem() throws {
        let apple = try AppleStandIn(.production)
        let jwt = try makeJWT(apple)
        #expect(try put(apple, noLineItem("tok-regression"), jwt: jwt).status == 200)
        #expect(try put(apple, lineItems("tok-regression", [oneTimeBuy("line-r")]), jwt: jwt).status == 200)
        let regressed = try put(apple, noLineItem("tok-regression"), jwt: jwt)
        #expect(regressed.status == 400)
        #expect(regressed.errors.first?["fieldName"] as? String == "status", "\(regressed.body)")
    }

    @Test func twoReportsForOneTokenInFlightAtOnceAreRefused() throws {
        let apple = try AppleStandIn(.production)
        let jwt = try makeJWT(apple)
        try apple.setLatency(ms: 5000)  // the first stays in flight while the second arrives
        // On a thread of its own, not the test pool's (whose few threads other tests may hold), and the second
        // is sent only once the stand-in says the first is in flight: no sleep to guess it by.
        let firstDone = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var firstStatus: Int?
        Thread {
            firstStatus = try? put(apple, noLineItem("tok-overlap"), jwt: jwt).status
            firstDone.signal()
        }.start()
        let deadline = Date().addingTimeInterval(30)
        while try !apple.inFlight().contains("tok-overlap") {
            try #require(Date() < deadline, "the first report never reached the stand-in")
            Thread.sleep(forTimeInterval: 0.02)
        }
        let second = try put(apple, noLineItem("tok-overlap"), jwt: jwt)
        #expect(second.status == 400)
        #expect(second.errors.first?["errorCode"] as? Int == 4000032, "\(second.body)")
        firstDone.wait()
        #expect(firstStatus == 200)
        try apple.setLatency(ms: 0)
        // Once the first is answered, the token takes reports again.
        #expect(try put(apple, noLineItem("tok-overlap"), jwt: jwt).status == 200)
    }

    @Test func rateLimitingSaysWhenToRetryInUnixMilliseconds() throws {
        let apple = try AppleStandIn(.production)
        try apple.setMode(.rateLimited, count: 1, retryAfterMs: 2000)
        let report = noLineItem("tok-rate")
        let before = Int(Date().timeIntervalSince1970 * 1000)
        let limited = try put(apple, report, jwt: try makeJWT(apple))
        #expect(limited.status == 429)
        let retryAfter = limited.headers["retry-after"].flatMap { Int($0) } ?? 0
        #expect(retryAfter >= before + 2000 && retryAfter <= before + 12000, "Retry-After \(retryAfter), sent at \(before)")

        // Only one answer was forced.
        #expect(try put(apple, report, jwt: try makeJWT(apple)).status == 200)
    }
}

// MARK: - Reports, JWTs and requests, made here rather than by the stand-in

private let bundleId = "com.example.linkout"

private func noLineItem(_ token: String) -> [String: Any] {
    ["requestIdentifier": UUID().uuidString, "externalPurchaseId": token, "status": "NO_LINE_ITEM"]
}

private func lineItems(_ token: String, _ items: [[String: Any]]) -> [String: Any] {
    ["requestIdentifier": UUID().uuidString, "externalPurchaseId": token, "status": "LINE_ITEM", "lineItems": items]
}

/// A one-time buy that the schema accepts: 10.00 EUR plus 21 % tax, in milli-units.
private func oneTimeBuy(_ id: String) -> [String: Any] {
    [
        "lineItemId": id, "creationDate": 1_790_000_000_000, "eventType": "BUY", "productType": "ONE_TIME_BUY",
        "productIdentifier": "pro.lifetime", "quantity": 1, "pricingCurrency": "EUR", "reportingCurrency": "EUR",
        "amountTaxExclusive": 10000, "amountTaxInclusive": 12100, "netAmountTaxExclusive": 10000,
        "taxAmount": 2100, "taxCountry": "ESP",
    ]
}

/// An ES256 JWT as Apple documents it: header alg, kid, typ; claims iss, iat, exp, aud, bid; the signature
/// the raw 64-byte r‖s. `key`: the stand-in's In-App Purchase key unless another is given.
private func makeJWT(
    _ apple: AppleStandIn, key: P256.Signing.PrivateKey? = nil, bundleId: String = bundleId, lifetime: Int = 300
) throws -> String {
    let signer = try key ?? P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: apple.keyFile, encoding: .utf8))
    let now = Int(Date().timeIntervalSince1970)
    let header: [String: Any] = ["alg": "ES256", "kid": apple.keyId, "typ": "JWT"]
    let claims: [String: Any] = [
        "iss": apple.issuerId, "iat": now, "exp": now + lifetime, "aud": "appstoreconnect-v1", "bid": bundleId,
    ]
    let input =
        try base64URL(JSONSerialization.data(withJSONObject: header, options: .sortedKeys)) + "."
        + base64URL(JSONSerialization.data(withJSONObject: claims, options: .sortedKeys))
    return input + "." + base64URL(try signer.signature(for: Data(input.utf8)).rawRepresentation)
}

private func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

private struct APIResponse {
    var status: Int
    /// Names lowercased.
    var headers: [String: String]
    var body: String
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(body.utf8)) }
    /// Apple's 400 entries.
    var errors: [[String: Any]] { (json as? [String: Any])?["errors"] as? [[String: Any]] ?? [] }
    /// The stand-in's reasons for a 401.
    var problems: [String] { (json as? [String: Any])?["problems"] as? [String] ?? [] }
}

private func put(_ apple: AppleStandIn, _ report: [String: Any], jwt: String) throws -> APIResponse {
    let body = String(decoding: try JSONSerialization.data(withJSONObject: report), as: UTF8.self)
    return try send(apple, "PUT", "/externalPurchase/v1/reports", jwt: jwt, body: body)
}

/// One request with curl, trusting only the test CA (Foundation's URLSession cannot be given a CA on Linux).
private func send(_ apple: AppleStandIn, _ method: String, _ path: String, jwt: String, body: String? = nil) throws -> APIResponse {
    let headerFile = NSTemporaryDirectory() + "apple-standin-headers-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: headerFile) }
    var arguments = [
        "curl", "-sS", "-m", "10", "--cacert", apple.caFile, "-X", method, "-D", headerFile,
        "-H", "Authorization: Bearer " + jwt, "-w", "\n%{http_code}",
    ]
    if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
    let result = try Command.run("/usr/bin/env", arguments + [apple.url + path])
    let text = result.stdoutText
    let errorText = result.stderr
    guard result.status == 0, let newline = text.lastIndex(of: "\n"),
        let status = Int(text[text.index(after: newline)...])
    else {
        throw AppleStandIn.StandInError(description: "curl \(method) \(path) failed: \(errorText) \(text)")
    }
    var headers: [String: String] = [:]
    for line in ((try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? "").components(separatedBy: "\r\n") {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return APIResponse(status: status, headers: headers, body: String(text[..<newline]))
}
