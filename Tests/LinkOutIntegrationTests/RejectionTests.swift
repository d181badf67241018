import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// Every refusal over real HTTP: 400, its family's page from Public/, the reason in a header, nothing recorded.
@Suite struct RejectionTests {
    static let now = TokenBuilder.nowMs
    static let id = "6a1e5e4c-1b5b-4f7e-9f0e-3c2d1b0a9f8e"

    /// (reason, field, query)
    static let cases: [(RejectReason, TokenField?, String)] = [
        (.missingToken, nil, "bundleId=com.example"),
        (.missingToken, nil, "externalPurchaseToken=&bundleId=com.example"),
        (.missingBundleId, nil, "externalPurchaseToken=\(TokenBuilder.minted(id: id))"),
        (
            .duplicateParameter, nil,
            "externalPurchaseToken=\(TokenBuilder.minted(id: id))&externalPurchaseToken=\(TokenBuilder.minted())&bundleId=com.example"
        ),
        (.malformedQuery, nil, "externalPurchaseToken=%zz\(TokenBuilder.minted(id: id))&bundleId=com.example"),
        (.tokenTooLong, nil, "externalPurchaseToken=\(String(repeating: "A", count: 4100))&bundleId=com.example"),
        (.tokenNotBase64, nil, "externalPurchaseToken=abc*def&bundleId=com.example"),
        (.tokenNotJSON, nil, "externalPurchaseToken=\(TokenBuilder.encoded("not json at all"))&bundleId=com.example"),
        (
            .missingField, .externalPurchaseId,
            "externalPurchaseToken=\(TokenBuilder.encoded(#"{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":\#(now)}"#))&bundleId=com.example"
        ),
        (
            .missingField, .appAppleId,
            "externalPurchaseToken=\(TokenBuilder.encoded(#"{"bundleId":"com.example","tokenCreationDate":\#(now),"externalPurchaseId":"\#(id)"}"#))&bundleId=com.example"
        ),
        (
            .wrongFieldType, .appAppleId,
            "externalPurchaseToken=\(TokenBuilder.encoded(#"{"appAppleId":"1234567890","bundleId":"com.example","tokenCreationDate":\#(now),"externalPurchaseId":"\#(id)"}"#))&bundleId=com.example"
        ),
        (
            .invalidExternalPurchaseId, .externalPurchaseId,
            "externalPurchaseToken=\(TokenBuilder.minted(id: "not-a-uuid"))&bundleId=com.example"
        ),
        (.unknownApp, .bundleId, "externalPurchaseToken=\(TokenBuilder.minted(id: id, bundleId: "com.other"))&bundleId=com.other"),
        (.appAppleIdMismatch, .appAppleId, "externalPurchaseToken=\(TokenBuilder.minted(id: id, appAppleId: 42))&bundleId=com.example"),
        (.bundleIdMismatch, .bundleId, "externalPurchaseToken=\(TokenBuilder.minted(id: id))&bundleId=com.evil"),
        (
            .createdInFuture, .tokenCreationDate,
            "externalPurchaseToken=\(TokenBuilder.minted(id: id, created: now + 3_600_000))&bundleId=com.example"
        ),
        (
            .expired, .tokenExpirationDate,
            "externalPurchaseToken=\(TokenBuilder.minted(id: id, created: now - 7_200_000, type: .services, expiration: now - 3_600_000))&bundleId=com.example"
        ),
        // A type merely unknown is accepted (LinkOutFlowTests); one that could not be a type is not.
        (
            .invalidTokenType, .tokenType,
            "externalPurchaseToken=\(TokenBuilder.encoded(#"{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":\#(now),"externalPurchaseId":"\#(id)","tokenType":"bogus\r\nX-Evil: 1","tokenExpirationDate":\#(now + 60000)}"#))&bundleId=com.example"
        ),
    ]

    @Test func everyReasonIsAnsweredWithItsCode() throws {
        // Every reason the core knows is exercised here.
        #expect(Set(Self.cases.map(\.0)) == Set(RejectReason.allCases))
        let server = try GatewayProcess.start()
        let pages = try ShopperPages.catalog()
        for (reason, field, query) in Self.cases {
            let response = try server.get("/nl?" + query)
            #expect(response.status == 400, "\(reason)")
            #expect(response[header: "X-Linkout-Reason"] == reason.rawValue, "expected \(reason.rawValue)")
            #expect(response[header: "X-Linkout-Reason-Field"] == field?.rawValue, "\(reason)")
            #expect(response[header: "Content-Type"] == "text/html; charset=utf-8")
            #expect(response[header: "Location"] == nil)
            // No Accept-Language: the link's country's language (/nl: Dutch), the refusal's family's page.
            #expect(response[header: "Content-Language"] == "nl")
            #expect(
                response.body == pages.page(PageKind.refusal(reason), language: ShopperLanguage.index(of: "nl")!),
                "\(reason): the shopper sees the family's page from Public/, nothing echoed")
        }
        #expect(try exportTokens(store: server.storePath).isEmpty)
        // Operators get an access log line per refusal, with its code (and field).
        let logged = server.accessLog(atLeast: Self.cases.count).filter { $0["status"] as? Int == 400 }
        #expect(logged.count == Self.cases.count)
        #expect(logged.contains { $0["reason"] as? String == "bundle_id_mismatch:bundleId" })
    }

    @Test func invalidTokenCanBeSentOnWhenTheLinkSaysSo() throws {
        let server = try GatewayProcess.start(
            links: """
                [{ "id": "lenient", "path": "/nl", "country": "nl", "onInvalidToken": "redirect",
                   "destinations": [{ "url": "https://a.example.com/x" }, { "url": "https://b.example.com/y" }] }]
                """)
        let response = try server.get("/nl?bundleId=com.example")
        #expect(response.status == 302)
        #expect(response[header: "Location"] == "https://a.example.com/x")
        #expect(response[header: "X-Linkout-Reason"] == "missing_token")
        #expect(try exportTokens(store: server.storePath).isEmpty, "no token to report")
        #expect(server.stop() == 0)
        // Recorded as an untokened visit.
        let count = try sqliteCount(
            server.storePath, "SELECT count(*) FROM untokened_visits WHERE reason = 'missing_token' AND link = 'lenient'")
        #expect(count == 1)
    }

    @Test func unknownPathsAndOtherMethods() throws {
        let server = try GatewayProcess.start()
        let notFound = try server.get("/xx?externalPurchaseToken=\(TokenBuilder.minted())&bundleId=com.example")
        #expect(notFound.status == 404)
        #expect(notFound.bodyText.contains("<html"))
        #expect(try server.get("/").status == 404)
        #expect(try server.get("/nl/").status == 404)
        for method in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"] {
            let response = try fetch(
                port: server.port, method, "/nl?externalPurchaseToken=\(TokenBuilder.minted())&bundleId=com.example",
                headers: ["Content-Length: 0"])
            #expect(response.status == 405, "\(method)")
            #expect(response[header: "Allow"] == "GET, HEAD", "\(method)")
        }
        // The valid token on /xx is kept (as link `unrouted`, with its path: it must be reported to Apple);
        // nothing is recorded for any link.
        let tokens = try exportTokens(store: server.storePath)
        #expect(tokens.allSatisfy { $0["link"] as? String == "unrouted" && $0["path"] as? String == "/xx" })
        #expect(tokens.count == 1)
    }

    @Test func oversizeInputIsRefusedAndTheServerKeepsServing() throws {
        let server = try GatewayProcess.start()
        // A header block larger than the limit: refused by the parser (431) without calling the gateway.
        let huge = try? fetch(
            port: server.port, "GET", "/nl?bundleId=com.example", headers: ["X-Filler: " + String(repeating: "a", count: 40_000)])
        if let huge { #expect(huge.status >= 400 && huge.status < 500) }
        // A body on a link-out: refused before the gateway sees it (RFC 9112 lets a server refuse a body it
        // does not expect; any Content-Length but 0 is 400 body_not_allowed).
        let connection = try HTTPConnection(port: server.port)
        try connection.sendRaw("POST /nl HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        let body = try connection.readResponse()
        #expect(body.status == 400)
        #expect(body[header: "X-Linkout-Reason"] == "body_not_allowed")
        // A token far over the cap.
        let long = try server.get(TokenBuilder.linkOut("/nl", token: String(repeating: "QUFB", count: 3000)))
        #expect(long.status == 400)
        #expect(long[header: "X-Linkout-Reason"] == "token_too_long")
        // Still serving, nothing recorded.
        #expect(try server.get("/healthz").status == 200)
        #expect(try exportTokens(store: server.storePath).isEmpty)
    }
}

/// A count read straight from the SQLite file with Python's sqlite3 module, independently of linkout's
/// own reader.
func sqliteCount(_ path: String, _ sql: String) throws -> Int {
    let result = try Command.python(
        ["-c", "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])", path, sql])
    return Int(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
}
