import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// The issue's "done when": Apple's sample token through the shipped config, recorded once, counted twice.
@Suite struct LinkOutFlowTests {
    @Test func appleSampleTokenRedirectsAndIsRecordedIdempotently() throws {
        let server = try GatewayProcess.start()
        let target = TokenBuilder.linkOut("/nl", token: AppleSampleToken.text)

        let first = try server.get(target)
        #expect(first.status == 302)
        let location = try #require(first[header: "Location"])
        #expect(location.hasPrefix("https://checkout.example.com/nl?") || location.hasPrefix("https://checkout-b.example.com/nl?"))
        #expect(location.hasSuffix("externalPurchaseId=00000000-0000-0000-0000-000000000000"))
        #expect(first[header: "Cache-Control"] == "no-store")
        #expect(first[header: "Referrer-Policy"] == "no-referrer")
        #expect(first[header: "Content-Type"] == nil)
        #expect(first.body.isEmpty)
        #expect(!location.contains("externalPurchaseToken"), "the raw token is not forwarded by default")

        var tokens = try exportTokens(store: server.storePath)
        #expect(tokens.count == 1)
        #expect(tokens.first?["hits"] as? Int == 1)

        let second = try server.get(target)
        #expect(second.status == 302)
        #expect(second[header: "Location"] == location, "sticky: the same token lands on the same destination")
        tokens = try exportTokens(store: server.storePath)
        #expect(tokens.count == 1)
        let record = try #require(tokens.first)
        #expect(record["hits"] as? Int == 2)
        #expect(record["externalPurchaseId"] as? String == "00000000-0000-0000-0000-000000000000")
        #expect(record["appAppleId"] as? Int == 1234567890)
        #expect(record["bundleId"] as? String == "com.example")
        #expect(record["tokenCreationDate"] as? Int == 1706169600000)
        #expect(record["environment"] as? String == "production")
        #expect(record["link"] as? String == "nl")
        #expect(record["country"] as? String == "nl")
        #expect(location.hasPrefix(try #require(record["destination"] as? String)))
        #expect(record["stale"] as? Bool == true, "a token from 2024 is accepted but flagged stale")
        #expect((record["lastSeen"] as? Int ?? 0) >= (record["firstSeen"] as? Int ?? 1))
        #expect(server.stop() == 0)
    }

    /// Apple may add custom-link kinds (iOS 27.2's have no published strings yet): a token of a type linkout
    /// does not know, or with one custom-link field and not the other, still reaches the checkout, is recorded
    /// with its fields exactly as sent (so it is reported), and is counted so the operator sees it arrive.
    @Test func tokensOfUndocumentedShapesAreRedirectedRecordedAndCounted() throws {
        let server = try GatewayProcess.start()
        let now = TokenBuilder.nowMs
        let shapes: [(id: String, extra: String, type: String?, expires: Int64?, why: String)] = [
            (
                UUID().uuidString.lowercased(), #","tokenType":"BRAND_NEW_KIND","tokenExpirationDate":\#(now + 3_600_000)"#,
                "BRAND_NEW_KIND", now + 3_600_000, "unknown_type"
            ),
            (UUID().uuidString.lowercased(), #","tokenType":"SERVICES""#, "SERVICES", nil, "type_without_expiration"),
            (
                UUID().uuidString.lowercased(), #","tokenExpirationDate":\#(now + 3_600_000)"#, nil, now + 3_600_000,
                "expiration_without_type"
            ),
        ]
        for shape in shapes {
            let json =
                #"{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":\#(now),"externalPurchaseId":"\#(shape.id)"\#(shape.extra)}"#
            let response = try server.get(TokenBuilder.linkOut("/de", token: TokenBuilder.encoded(json)))
            #expect(response.status == 302, "\(shape.why): \(response[header: "X-Linkout-Reason"] ?? "")")
            #expect(response[header: "Location"] == "https://checkout.example.com/de?externalPurchaseId=\(shape.id)")
        }
        // A documented custom-link token is not counted.
        let plain = UUID().uuidString.lowercased()
        #expect(
            try server.get(
                TokenBuilder.linkOut(
                    "/de", token: TokenBuilder.minted(id: plain, created: now, type: .services, expiration: now + 3_600_000))
            ).status == 302)

        let tokens = try exportTokens(store: server.storePath)
        #expect(tokens.count == 4)
        for shape in shapes {
            let record = try #require(tokens.first { $0["externalPurchaseId"] as? String == shape.id }, "\(shape.why)")
            #expect(record["tokenType"] as? String == shape.type, "\(shape.why)")
            #expect((record["tokenExpirationDate"] as? Int).map(Int64.init) == shape.expires, "\(shape.why)")
        }
        let samples = MetricsTests.parse(try fetch(port: server.adminPort, "GET", "/metrics").bodyText)
        for shape in shapes {
            #expect(samples["linkout_unusual_tokens_total{why=\"\(shape.why)\"}"] == 1, "\(shape.why)")
        }
        #expect(server.stop() == 0)
    }

    @Test func everyTokenEncodingIsAccepted() throws {
        let server = try GatewayProcess.start()

        // A token whose standard-alphabet form holds '+', '/' and padding: an extra field of characters
        // whose bits map to those symbols.
        let id = UUID().uuidString.lowercased()
        let json =
            #"{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":\#(TokenBuilder.nowMs),"externalPurchaseId":"\#(id)","note":"~~~???>>>~"}"#
        let standard = Data(json.utf8).base64EncodedString()
        try #require(standard.contains("+") && standard.contains("/") && standard.hasSuffix("="), "fixture must exercise '+', '/' and '='")
        let urlSafe = TokenBase64.encodeURLSafe(Array(json.utf8))

        let variants: [(String, String)] = [
            ("unpadded URL-safe", urlSafe),
            ("padded URL-safe", urlSafe + String(repeating: "=", count: (4 - urlSafe.count % 4) % 4)),
            (
                "standard, '+' and '/' percent-encoded",
                standard.replacingOccurrences(of: "+", with: "%2B").replacingOccurrences(of: "/", with: "%2F").replacingOccurrences(
                    of: "=", with: "%3D")
            ),
            ("standard, '=' as %3D", standard.replacingOccurrences(of: "=", with: "%3D")),
            ("standard as sent raw", standard),
            ("space-mangled ('+' form-decoded to space, sent as %20)", standard.replacingOccurrences(of: "+", with: "%20")),
        ]
        for (name, token) in variants {
            let response = try server.get(TokenBuilder.linkOut("/de", token: token))
            #expect(response.status == 302, "\(name): \(response[header: "X-Linkout-Reason"] ?? "")")
            #expect(response[header: "Location"] == "https://checkout.example.com/de?externalPurchaseId=\(id)", "\(name)")
        }
        let tokens = try exportTokens(store: server.storePath)
        #expect(tokens.count == 1)
        #expect(tokens.first?["hits"] as? Int == variants.count)
    }

    @Test func headAnswersLikeGetAndIsRecordedButNotAsAHit() throws {
        let server = try GatewayProcess.start()
        let id = UUID().uuidString.lowercased()
        let target = TokenBuilder.linkOut("/fr", token: TokenBuilder.minted(id: id))
        let head = try fetch(port: server.port, "HEAD", target)
        #expect(head.status == 302)
        #expect(head[header: "Location"] == "https://checkout.example.com/fr?externalPurchaseId=\(id)")
        let afterHead = try exportTokens(store: server.storePath)
        #expect(afterHead.count == 1)
        #expect(afterHead.first?["hits"] as? Int == 0)
        #expect(afterHead.first?["otherVisits"] as? Int == 1)
        let get = try server.get(target)
        #expect(get[header: "Location"] == head[header: "Location"])
        let afterGet = try exportTokens(store: server.storePath)
        #expect(afterGet.count == 1)
        #expect(afterGet.first?["hits"] as? Int == 1)
        #expect(afterGet.first?["otherVisits"] as? Int == 1)
    }

    @Test func destinationWithItsOwnQueryKeepsIt() throws {
        let server = try GatewayProcess.start()
        let id = UUID().uuidString.lowercased()
        let response = try server.get(TokenBuilder.linkOut("/at", token: TokenBuilder.minted(id: id)))
        #expect(response[header: "Location"] == "https://checkout.example.com/at?plan=annual&externalPurchaseId=\(id)")
    }

    @Test func sandboxAndCustomLinkTokensAreRecordedWithTheirFields() throws {
        let server = try GatewayProcess.start()
        let id = "SANDBOX_" + UUID().uuidString.lowercased()
        let expires = TokenBuilder.nowMs + 3_600_000
        let response = try server.get(
            TokenBuilder.linkOut("/fr", token: TokenBuilder.minted(id: id, type: .acquisition, expiration: expires)))
        #expect(response.status == 302)
        #expect(response[header: "Location"]?.hasSuffix("externalPurchaseId=\(id)") == true)
        let record = try #require(try exportTokens(store: server.storePath).first)
        #expect(record["environment"] as? String == "sandbox")
        #expect(record["tokenType"] as? String == "ACQUISITION")
        #expect(record["tokenExpirationDate"] as? Int == Int(expires))
        #expect(record["stale"] as? Bool == false)
    }
}
