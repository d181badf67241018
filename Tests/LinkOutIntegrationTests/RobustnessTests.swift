import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// Malformed and hostile requests against the real server: each gets its exact answer, other clients are
/// served meanwhile, and nothing is recorded.
@Suite struct RobustnessTests {
    struct Case {
        var name: String
        var bytes: [UInt8]
        var status: Int
        /// The `X-Linkout-Reason`, or nil when libevent answers before linkout sees the request.
        var reason: String?
    }

    static let now = TokenBuilder.nowMs
    /// A valid token: the head-level cases carry it, to show they are refused for their head, not their token.
    static let validId = "d1b2c3d4-0000-4000-8000-00000000abcd"
    static let token = TokenBuilder.minted(id: validId)
    static let link = TokenBuilder.linkOut("/nl", token: token)
    /// The other client's own token, so its HEAD visits are told apart from anything hostile.
    static let otherId = "e1b2c3d4-0000-4000-8000-00000000abcd"
    static let otherLink = TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: otherId))

    /// A whole link-out request, for the smuggling cases: if it were answered, its token would be recorded.
    static let smuggled =
        "GET " + TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: "f1b2c3d4-0000-4000-8000-00000000abcd"))
        + " HTTP/1.1\r\nHost: x\r\n\r\n"

    static func request(_ target: String, method: String = "GET", headers: String = "Host: x\r\n", body: String = "") -> [UInt8] {
        Array("\(method) \(target) HTTP/1.1\r\n\(headers)\r\n\(body)".utf8)
    }

    static func raw(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func json(_ text: String) -> String { TokenBuilder.encoded(text) }

    static let cases: [Case] = [
        // The query and the token: the gateway's own refusals.
        Case(name: "bundleId twice", bytes: request(link + "&bundleId=com.example"), status: 400, reason: "duplicate_parameter"),
        Case(name: "token twice", bytes: request(link + "&externalPurchaseToken=\(token)"), status: 400, reason: "duplicate_parameter"),
        Case(
            name: "CR LF encoded in the token", bytes: request("/nl?externalPurchaseToken=abc%0d%0aSet-Cookie:x&bundleId=com.example"),
            status: 400, reason: "token_not_base64"),
        Case(
            name: "path traversal as a token", bytes: request("/nl?externalPurchaseToken=../../etc/passwd&bundleId=com.example"),
            status: 400, reason: "token_not_base64"),
        Case(
            name: "token over the cap",
            bytes: request("/nl?externalPurchaseToken=\(String(repeating: "A", count: 5000))&bundleId=com.example"), status: 400,
            reason: "token_too_long"),
        Case(
            name: "token over the cap once percent-encoded",
            bytes: request("/nl?externalPurchaseToken=\(String(repeating: "%41", count: 1500))&bundleId=com.example"), status: 400,
            reason: "token_too_long"),
        Case(
            name: "JSON nested 100 deep",
            bytes: request(
                TokenBuilder.linkOut("/nl", token: json(String(repeating: "[", count: 100) + String(repeating: "]", count: 100)))),
            status: 400, reason: "token_not_json"),
        Case(
            name: "JSON nested in an unknown field",
            bytes: request(
                TokenBuilder.linkOut(
                    "/nl", token: json(#"{"x":"# + String(repeating: "{\"a\":", count: 50) + "1" + String(repeating: "}", count: 51)))),
            status: 400, reason: "token_not_json"),
        Case(
            name: "JSON array", bytes: request(TokenBuilder.linkOut("/nl", token: json("[1,2,3]"))), status: 400, reason: "token_not_json"),
        Case(
            name: "integer past 64 bits",
            bytes: request(
                TokenBuilder.linkOut(
                    "/nl",
                    token: json(
                        #"{"appAppleId":99999999999999999999999,"bundleId":"com.example","tokenCreationDate":\#(now),"externalPurchaseId":"\#(validId)"}"#
                    ))), status: 400, reason: "wrong_field_type"),
        Case(
            name: "id with a path", bytes: request(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: "../../admin"))), status: 400,
            reason: "invalid_external_purchase_id"),
        Case(
            name: "id with CR LF",
            bytes: request(
                TokenBuilder.linkOut(
                    "/nl",
                    token: json(
                        #"{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":\#(now),"externalPurchaseId":"\r\nSet-Cookie: a=b"}"#
                    ))), status: 400, reason: "invalid_external_purchase_id"),
        Case(
            name: "id with a NUL",
            bytes: request(
                TokenBuilder.linkOut(
                    "/nl",
                    token: json(
                        #"{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":\#(now),"externalPurchaseId":"d1b2c3d4-0000-4000-8000-00000000abc\u0000"}"#
                    ))), status: 400, reason: "invalid_external_purchase_id"),
        Case(
            name: "SANDBOX and not a UUID",
            bytes: request(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: "SANDBOX_" + String(repeating: "z", count: 36)))),
            status: 400, reason: "invalid_external_purchase_id"),
        Case(
            name: "invalid UTF-8 inside the JSON",
            bytes: request(
                TokenBuilder.linkOut(
                    "/nl",
                    token: TokenBase64.encodeURLSafe(
                        Array(#"{"appAppleId":1234567890,"bundleId":"com."#.utf8) + [0xFF, 0xFE]
                            + Array(#"","tokenCreationDate":1,"externalPurchaseId":"x"}"#.utf8)))), status: 400, reason: "token_not_json"),
        Case(
            name: "a field twice",
            bytes: request(
                TokenBuilder.linkOut(
                    "/nl",
                    token: json(
                        #"{"appAppleId":1234567890,"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":\#(now),"externalPurchaseId":"\#(validId)"}"#
                    ))), status: 400, reason: "token_not_json"),
        Case(
            name: "created far in the future",
            bytes: request(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: validId, created: now + 86_400_000))), status: 400,
            reason: "created_in_future"),
        Case(
            name: "bundleId with CR LF", bytes: request("/nl?externalPurchaseToken=\(token)&bundleId=com.example%0d%0aX:1"), status: 400,
            reason: "bundle_id_mismatch"),
        Case(
            name: "bundleId look-alike (Cyrillic a)", bytes: request("/nl?externalPurchaseToken=\(token)&bundleId=com.ex%D0%B0mple"),
            status: 400, reason: "bundle_id_mismatch"),
        Case(
            name: "bundleId of 10 KB",
            bytes: request("/nl?externalPurchaseToken=\(token)&bundleId=\(String(repeating: "a", count: 10_000))"), status: 400,
            reason: "bundle_id_mismatch"),
        Case(
            name: "bad percent escape", bytes: request("/nl?externalPurchaseToken=%zz&bundleId=com.example"), status: 400,
            reason: "malformed_query"),
        Case(
            name: "percent at the end", bytes: request("/nl?externalPurchaseToken=abc%&bundleId=com.example"), status: 400,
            reason: "malformed_query"),
        Case(name: "empty query", bytes: request("/nl?"), status: 400, reason: "missing_token"),
        Case(name: "only ampersands", bytes: request("/nl?&&&&"), status: 400, reason: "missing_token"),
        Case(
            name: "parameter name without value", bytes: request("/nl?externalPurchaseToken&bundleId"), status: 400, reason: "missing_token"
        ),
        Case(name: "HEAD without a token", bytes: raw("HEAD /nl HTTP/1.1\r\nHost: x\r\n\r\n"), status: 400, reason: "missing_token"),
        // Paths: matched byte for byte, nothing decoded or normalised.
        Case(
            name: "dot-dot segment", bytes: request("/de/../nl?externalPurchaseToken=\(token)&bundleId=com.example"), status: 404,
            reason: nil),
        Case(
            name: "double slash host", bytes: request("//evil.example/nl?externalPurchaseToken=\(token)&bundleId=com.example"), status: 404,
            reason: nil),
        Case(name: "backslash host", bytes: request("/\\evil.example/nl"), status: 404, reason: nil),
        Case(name: "encoded dots", bytes: request("/%2e%2e/nl"), status: 404, reason: nil),
        Case(name: "encoded slash", bytes: request("%2Fnl"), status: 400, reason: "unsupported_target_form"),
        Case(
            name: "encoded NUL in the path", bytes: request("/nl%00?externalPurchaseToken=\(token)&bundleId=com.example"), status: 404,
            reason: nil),
        Case(name: "upper-case path", bytes: request("/NL?externalPurchaseToken=\(token)&bundleId=com.example"), status: 404, reason: nil),
        // Methods.
        Case(
            name: "POST without a body", bytes: request(link, method: "POST", headers: "Host: x\r\nContent-Length: 0\r\n"), status: 405,
            reason: nil),
        Case(name: "PUT", bytes: request(link, method: "PUT", headers: "Host: x\r\nContent-Length: 0\r\n"), status: 405, reason: nil),
        Case(name: "DELETE", bytes: request(link, method: "DELETE"), status: 405, reason: nil),
        Case(name: "TRACE", bytes: request("/nl", method: "TRACE"), status: 405, reason: nil),
        Case(name: "unknown method", bytes: request(link, method: "BREW"), status: 501, reason: "unknown_method"),
        Case(name: "lower-case method", bytes: request(link, method: "get"), status: 501, reason: "unknown_method"),
        Case(
            name: "CONNECT to elsewhere", bytes: raw("CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n"), status: 400,
            reason: "unsupported_target_form"),
        // The request head.
        Case(
            name: "absolute-form target with user info", bytes: request("http://user@evil.example" + link), status: 400,
            reason: "unsupported_target_form"),
        Case(
            name: "absolute-form target of another scheme", bytes: request("ftp://evil.example" + link), status: 400,
            reason: "unsupported_target_form"),
        Case(name: "asterisk target", bytes: request("*", method: "OPTIONS"), status: 400, reason: "unsupported_target_form"),
        Case(
            name: "two spaces after the method", bytes: raw("GET  \(link) HTTP/1.1\r\nHost: x\r\n\r\n"), status: 400,
            reason: "unsupported_target_form"),
        Case(
            name: "Transfer-Encoding chunked on GET",
            bytes: request(link, headers: "Host: x\r\nTransfer-Encoding: chunked\r\n", body: "0\r\n\r\n"), status: 400,
            reason: "transfer_encoding"),
        Case(
            name: "Transfer-Encoding identity", bytes: request(link, headers: "Host: x\r\nTransfer-Encoding: identity\r\n"), status: 400,
            reason: "transfer_encoding"),
        Case(
            name: "Transfer-Encoding and Content-Length (smuggling)",
            bytes: request(link, headers: "Host: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n", body: "0\r\n\r\n"), status: 400,
            reason: "transfer_encoding"),
        Case(
            name: "a body", bytes: request(link, headers: "Host: x\r\nContent-Length: 5\r\n", body: "hello"), status: 400,
            reason: "body_not_allowed"),
        Case(
            name: "a chunked body on POST",
            bytes: request(link, method: "POST", headers: "Host: x\r\nTransfer-Encoding: chunked\r\n", body: "5\r\nhello\r\n0\r\n\r\n"),
            status: 400, reason: "transfer_encoding"),
        Case(
            name: "HEAD with a body holding a second request (smuggling)",
            bytes: raw("HEAD \(link) HTTP/1.1\r\nHost: x\r\nContent-Length: \(smuggled.count)\r\n\r\n" + smuggled), status: 400,
            reason: "body_not_allowed"),
        Case(
            name: "TRACE with a body", bytes: raw("TRACE / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd"), status: 400,
            reason: "body_not_allowed"),
        Case(
            name: "Content-Length twice", bytes: request(link, headers: "Host: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n"),
            status: 400, reason: "duplicate_content_length"),
        Case(
            name: "negative Content-Length", bytes: request(link, headers: "Host: x\r\nContent-Length: -1\r\n"), status: 400,
            reason: "invalid_content_length"),
        Case(
            name: "Content-Length not a number", bytes: request(link, headers: "Host: x\r\nContent-Length: abc\r\n"), status: 400,
            reason: "invalid_content_length"),
        Case(name: "Host twice", bytes: request(link, headers: "Host: x\r\nHost: evil.example\r\n"), status: 400, reason: "duplicate_host"),
        Case(
            name: "control byte in a header value", bytes: request(link, headers: "Host: x\r\nX-A: a\u{01}b\r\n"), status: 400,
            reason: "control_character_in_header"),
        Case(
            name: "DEL in a header value", bytes: request(link, headers: "Host: x\r\nX-A: a\u{7F}b\r\n"), status: 400,
            reason: "control_character_in_header"),
        Case(
            name: "space in a header name", bytes: request(link, headers: "Host: x\r\nX A: b\r\n"), status: 400,
            reason: "control_character_in_header"),
        Case(
            name: "header line without a colon", bytes: request(link, headers: "Host: x\r\nGarbage\r\n"), status: 400,
            reason: "invalid_header_name"),
        Case(
            name: "HTTP/2.0 in an HTTP/1 request line", bytes: raw("GET \(link) HTTP/2.0\r\nHost: x\r\n\r\n"), status: 505,
            reason: "unsupported_version"),
        Case(name: "HTTP/0.9 request", bytes: raw("GET \(link)\r\n\r\n"), status: 400, reason: "bad_request_line"),
        Case(name: "bad version", bytes: raw("GET \(link) HTTP/1.x\r\nHost: x\r\n\r\n"), status: 400, reason: "bad_request_line"),
        Case(name: "tab in the target", bytes: request("/nl\t?x"), status: 400, reason: "invalid_target"),
        Case(name: "UTF-8 in the target", bytes: request("/nl?x=é"), status: 400, reason: "invalid_target"),
        Case(
            name: "invalid UTF-8 in the target",
            bytes: Array("GET /nl?x=".utf8) + [0xFF, 0xFE] + Array(" HTTP/1.1\r\nHost: x\r\n\r\n".utf8), status: 400,
            reason: "invalid_target"),
        Case(
            name: "a 20 KB header", bytes: request(link, headers: "Host: x\r\nX-A: \(String(repeating: "a", count: 20_000))\r\n"),
            status: 431, reason: "head_too_large"),
        Case(
            name: "a 20 KB target", bytes: request("/nl?" + String(repeating: "a", count: 20_000)), status: 414, reason: "target_too_long"),
        Case(
            name: "3,000 headers", bytes: request(link, headers: "Host: x\r\n" + (0..<3000).map { "X-\($0): v\r\n" }.joined()), status: 431,
            reason: "head_too_large"),
        Case(name: "empty request line", bytes: raw("\r\n\r\n"), status: 400, reason: "bad_request_line"),
        // What libevent's parser hides, seen in the raw bytes.
        Case(
            name: "NUL in a header value", bytes: request(link, headers: "Host: x\r\nX-A: a\u{0}b\r\n"), status: 400,
            reason: "nul_in_header"),
        Case(
            name: "NUL cutting off the rest of the request line", bytes: raw("GET \(link) HTTP/1.1\u{0}junk\r\nHost: x\r\n\r\n"),
            status: 400, reason: "nul_in_header"),
        Case(name: "NUL in Host", bytes: request(link, headers: "Host: x\u{0}.evil.example\r\n"), status: 400, reason: "nul_in_header"),
        Case(name: "obs-fold line", bytes: request(link, headers: "Host: x\r\nX-A: a\r\n b\r\n"), status: 400, reason: "obs_fold"),
        Case(name: "obs-fold with a tab", bytes: request(link, headers: "Host: x\r\nX-A: a\r\n\tb\r\n"), status: 400, reason: "obs_fold"),
        Case(
            name: "obs-fold hiding Transfer-Encoding",
            bytes: request(link, headers: "Host: x\r\nX-A: a\r\n Transfer-Encoding: chunked\r\n"), status: 400, reason: "obs_fold"),
        Case(name: "bare LF line endings", bytes: raw("GET \(link) HTTP/1.1\nHost: x\n\n"), status: 400, reason: "bare_lf"),
        Case(
            name: "bare LF ending one header", bytes: raw("GET \(link) HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n"), status: 400, reason: "bare_lf"
        ),
        Case(name: "bare LF ending the head", bytes: raw("GET \(link) HTTP/1.1\r\nHost: x\r\n\n"), status: 400, reason: "bare_lf"),
        Case(name: "HTTP/1.1 without Host", bytes: raw("GET \(link) HTTP/1.1\r\n\r\n"), status: 400, reason: "missing_host"),
        Case(
            name: "HTTP/1.1 without Host, a lookalike header", bytes: raw("GET \(link) HTTP/1.1\r\nX-Host: x\r\n\r\n"), status: 400,
            reason: "missing_host"),
    ]

    @Test func everyHostileRequestGetsItsAnswerAndNothingIsRecorded() throws {
        #expect(Self.cases.count == 80, "a case dropped from the table by mistake is noticed")
        let server = try GatewayProcess.start()
        let port = server.port

        // Another client keeps being served the whole time (HEAD: answered like GET, recorded as a HEAD
        // visit, which is not a hit).
        let served = LockedList()
        let failures = LockedList()
        let stop = LockedFlag()
        let other = DispatchGroup()
        other.enter()
        Thread.detachNewThread {
            defer { other.leave() }
            var connection = try? HTTPConnection(port: port)
            while !stop.isSet {
                do {
                    let open = try connection ?? HTTPConnection(port: port)
                    connection = open
                    let response = try open.request("HEAD", Self.otherLink)
                    if response.status == 302 { served.append("ok") } else { failures.append("\(response.status)") }
                } catch {
                    failures.append("\(error)")
                    connection = nil
                }
            }
        }

        for hostile in Self.cases {
            let connection = try HTTPConnection(port: port)
            try connection.sendRaw(hostile.bytes)
            let response: HTTPResponse
            do {
                response = try connection.readResponse(head: hostile.bytes.starts(with: Array("HEAD".utf8)))
            } catch {
                Issue.record("\(hostile.name): no answer (\(error))")
                continue
            }
            #expect(response.status == hostile.status, "\(hostile.name)")
            #expect(response[header: "X-Linkout-Reason"] == hostile.reason, "\(hostile.name)")
            #expect(response[header: "Location"] == nil, "\(hostile.name)")
            // The other client is answered after this case too (its HEAD waits for a commit, like a GET).
            let before = served.count
            let deadline = Date().addingTimeInterval(3)
            while served.count == before, Date() < deadline { usleep(1_000) }
            #expect(served.count > before, "\(hostile.name): the other client was not served after it")
            // A head problem closes the connection, and says so.
            if let reason = hostile.reason, HeadProblem(rawValue: reason) != nil {
                #expect(response[header: "Connection"] == "close", "\(hostile.name)")
                #expect(connection.isClosedByPeer(), "\(hostile.name)")
            }
        }
        stop.set()
        other.wait()

        #expect(failures.snapshot.isEmpty, "the other client failed: \(failures.snapshot.prefix(3))")
        #expect(served.count > Self.cases.count)
        #expect(try server.get("/healthz").status == 200)
        #expect(server.stop() == 0)
        // Only the other client's token, from its HEADs: nothing hostile was recorded.
        // (A valid token on a path no link serves is kept as link `unrouted`, whatever the path: it must be
        // reported to Apple. It counts for no link.)
        let all = try exportTokens(store: server.storePath)
        #expect(all.filter { $0["link"] as? String == "unrouted" }.allSatisfy { ($0["path"] as? String)?.utf8.count ?? 999 <= 128 })
        let tokens = all.filter { $0["link"] as? String != "unrouted" }
        #expect(tokens.count == 1, "nothing hostile was recorded")
        #expect(tokens.first?["externalPurchaseId"] as? String == Self.otherId)
        #expect(tokens.first?["hits"] as? Int == 0)
    }

    /// Heads that a strict parser accepts are still served: without Host in HTTP/1.0, split into many reads,
    /// pipelined. HEAD: answered with the 302 of a GET, recorded as a visit that is not a hit.
    @Test func strictHeadsStillServedWhateverTheirReads() throws {
        let server = try GatewayProcess.start()

        // HTTP/1.0 without Host: allowed (Host is required from HTTP/1.1).
        let old = try HTTPConnection(port: server.port)
        try old.sendRaw("HEAD \(Self.link) HTTP/1.0\r\n\r\n")
        let oldAnswer = try old.readResponse(head: true)
        #expect(oldAnswer.status == 302)
        #expect(oldAnswer[header: "X-Linkout-Reason"] == nil)

        // One byte per send (TCP_NODELAY, a pause between), so CR and LF arrive in separate reads.
        let trickled = try HTTPConnection(port: server.port)
        for byte in Array("HEAD \(Self.link) HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n".utf8) {
            try trickled.sendRaw([byte])
            Thread.sleep(forTimeInterval: 0.001)
        }
        let trickledAnswer = try trickled.readResponse(head: true)
        #expect(trickledAnswer.status == 302)
        #expect(trickledAnswer[header: "X-Linkout-Reason"] == nil)
        // The same connection goes on: the next head, split at the CR LF.
        try trickled.sendRaw("HEAD \(Self.link) HTTP/1.1\r\nHost: x\r")
        Thread.sleep(forTimeInterval: 0.05)
        try trickled.sendRaw("\n\r")
        Thread.sleep(forTimeInterval: 0.05)
        try trickled.sendRaw("\n")
        #expect(try trickled.readResponse(head: true).status == 302)

        // Pipelined in one send: three good heads, all answered in order.
        let pipelined = try HTTPConnection(port: server.port)
        let good = "HEAD \(Self.link) HTTP/1.1\r\nHost: x\r\n\r\n"
        try pipelined.sendRaw(good + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + good)
        #expect(try pipelined.readResponse(head: true).status == 302)
        #expect(try pipelined.readResponse().status == 200)
        #expect(try pipelined.readResponse(head: true).status == 302)

        // A good head, then a bad one, in one send: the first is served, the second refused, then closed.
        let mixed = try HTTPConnection(port: server.port)
        try mixed.sendRaw(good + "HEAD \(Self.link) HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n" + good)
        let first = try mixed.readResponse(head: true)
        #expect(first.status == 302)
        #expect(first[header: "X-Linkout-Reason"] == nil)
        let second = try mixed.readResponse(head: true)
        #expect(second.status == 400)
        #expect(second[header: "X-Linkout-Reason"] == "obs_fold")
        #expect(second[header: "Connection"] == "close")
        #expect(mixed.isClosedByPeer())

        #expect(server.stop() == 0)
        // Exactly the six HEADs served, as visits that are not hits; the refused head recorded nothing.
        let tokens = try exportTokens(store: server.storePath)
        #expect(tokens.count == 1)
        #expect(tokens.first?["hits"] as? Int == 0)
        #expect(tokens.first?["otherVisits"] as? Int == 6)
    }

    /// The raw head check does not hang on the head deadline: with `requestHeadTimeoutSeconds` 0 it holds.
    @Test func rawHeadChecksHoldWithoutAHeadDeadline() throws {
        let server = try GatewayProcess.start(
            links: #"[{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/" }] }]"#,
            extra: #""server": { "requestHeadTimeoutSeconds": 0 },"#)
        for (bytes, reason) in [
            (Self.request(Self.link, headers: "Host: x\r\nX-A: a\u{0}b\r\n"), "nul_in_header"),
            (Self.request(Self.link, headers: "Host: x\r\nX-A: a\r\n b\r\n"), "obs_fold"),
            (Self.raw("GET \(Self.link) HTTP/1.1\nHost: x\n\n"), "bare_lf"),
            (Self.raw("GET \(Self.link) HTTP/1.1\r\n\r\n"), "missing_host"),
        ] {
            let connection = try HTTPConnection(port: server.port)
            try connection.sendRaw(bytes)
            let response = try connection.readResponse()
            #expect(response.status == 400, "\(reason)")
            #expect(response[header: "X-Linkout-Reason"] == reason)
        }
        #expect(try fetch(port: server.port, "HEAD", Self.link).status == 302)
        #expect(server.stop() == 0)
        // Only the last HEAD, as a visit that is not a hit: the refused requests recorded nothing.
        let tokens = try exportTokens(store: server.storePath)
        #expect(tokens.count == 1)
        #expect(tokens.first?["hits"] as? Int == 0)
        #expect(tokens.first?["otherVisits"] as? Int == 1)
    }
}
