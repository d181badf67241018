import Foundation
import LinkOutTestSupport
import Testing

@testable import LinkOutCore

@Suite("Gateway.decide")
struct GatewayTests {
    typealias F = Fixtures

    static let nl = Link(
        id: "nl", path: "/nl", country: "nl",
        destinations: [
            Destination(url: "https://checkout.example.com/nl", weight: 3),
            Destination(url: "https://checkout-b.example.com/nl", weight: 1),
        ])
    static let deAnnual = Link(
        id: "de-annual", path: "/de/annual", country: "de",
        destinations: [
            Destination(url: "https://checkout.example.com/de?plan=annual")
        ])
    static let fr = Link(
        id: "fr", path: "/fr", country: "fr",
        destinations: [
            Destination(url: "https://checkout.example.com/fr#top"),
            Destination(url: "https://checkout-b.example.com/fr"),
        ], onInvalidToken: .redirect)
    static let at = Link(
        id: "at", path: "/at", country: "at",
        destinations: [
            Destination(url: "https://checkout.example.com/at")
        ], forwardToken: true)

    static let config = GatewayConfig(
        tokens: TokenPolicy(maxLength: 1024, maxFutureSkewMs: 300_000, staleAfterMs: 3_600_000),
        apps: [AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890), AllowedApp(bundleId: "com.other", appAppleId: 42)],
        links: [nl, deAnnual, fr, at])

    let gateway = Gateway(config: config)
    let now = AppleSampleToken.creationDate + 5_000
    let validToken = TokenMinter.mint(TokenBuilder.token())

    private func decide(_ target: String, method: RequestMethod = .get, now: Int64? = nil) -> Decision {
        gateway.decide(method: method, target: Array(target.utf8), nowMs: now ?? self.now)
    }

    private func target(_ path: String, token: String?, bundleId: String? = "com.example", extra: String = "") -> String {
        var parameters: [String] = []
        if let token { parameters.append("externalPurchaseToken=\(token)") }
        if let bundleId { parameters.append("bundleId=\(bundleId)") }
        if !extra.isEmpty { parameters.append(extra) }
        return parameters.isEmpty ? path : path + "?" + parameters.joined(separator: "&")
    }

    private func asRedirect(_ decision: Decision, sourceLocation: SourceLocation = #_sourceLocation) -> Redirect? {
        guard case .redirect(let redirect) = decision else {
            Issue.record("expected a redirect, got \(decision)", sourceLocation: sourceLocation)
            return nil
        }
        return redirect
    }

    private func asUnrouted(_ decision: Decision, sourceLocation: SourceLocation = #_sourceLocation) -> UnroutedVisit? {
        guard case .recordThenNotFound(let visit) = decision else {
            Issue.record("expected a record then 404, got \(decision)", sourceLocation: sourceLocation)
            return nil
        }
        return visit
    }

    private func chosen(_ link: Link, id: String) -> String {
        link.destinations[DestinationChooser(destinations: link.destinations).choose(externalPurchaseId: id.utf8)].url
    }

    // MARK: Health and routing

    @Test("/healthz and /readyz answer GET and HEAD, and refuse other methods")
    func health() {
        #expect(decide("/healthz") == .health)
        #expect(decide("/healthz", method: .head) == .health)
        #expect(decide("/healthz", method: .other) == .methodNotAllowed)
        #expect(decide("/healthz?verbose=1") == .health)
        #expect(decide("/readyz") == .readiness)
        #expect(decide("/readyz", method: .head) == .readiness)
        #expect(decide("/readyz", method: .other) == .methodNotAllowed)
        #expect(decide("/readyz#x") == .readiness)
    }

    @Test(
        "an unknown path is not found, whatever the method",
        arguments: [
            "/", "", "/xx", "/nl/", "/NL", "//nl", "/nl%20", "/n%6C", "/de", "/de/annual/", "/healthz/", "/HEALTHZ",
            "http://gateway.example/nl", "*", "/nl/../nl", "/./nl", "nl",
        ])
    func notFound(_ path: String) {
        // A valid token there is recorded as unrouted (see `unroutedTokens`), but the answer is still 404.
        expect404(decide(target(path, token: validToken)))
        expect404(decide(target(path, token: validToken), method: .head))
        #expect(decide(target(path, token: validToken), method: .other) == .notFound)
        #expect(decide(target(path, token: nil)) == .notFound)
    }

    /// The shopper gets the 404 page: a plain one, or one sent after an unrouted token is recorded.
    private func expect404(_ decision: Decision, sourceLocation: SourceLocation = #_sourceLocation) {
        switch decision {
        case .notFound: break
        case .recordThenNotFound(let visit):
            #expect(visit.record.link == "unrouted", sourceLocation: sourceLocation)
        default: Issue.record("expected a 404, got \(decision)", sourceLocation: sourceLocation)
        }
    }

    @Test("a valid token on a path no link serves is recorded as unrouted, with the path, and answered 404")
    func unroutedTokens() throws {
        for (path, kept) in [("/nl/", "/nl/"), ("/NL", "/NL"), ("/nl\r\n", "/nl%0D%0A"), ("/a%20b", "/a%2520b")] {
            let visit = try #require(asUnrouted(decide(target(path, token: validToken))))
            #expect(visit.path == kept)
            let record = visit.record
            #expect(record.link == "unrouted" && record.path == kept && record.destination == "" && record.country == "")
            #expect(record.externalPurchaseId == TokenBuilder.token().externalPurchaseId)
        }
        let head = try #require(asUnrouted(decide(target("/nl/", token: validToken), method: .head)))
        #expect(head.kind == .head)
        // Without a valid token, a plain 404: nothing to record.
        #expect(decide(target("/nl/", token: validToken, bundleId: "com.other")) == .notFound)
        #expect(decide(target("/nl/", token: "junk")) == .notFound)
        #expect(decide(target("/nl/", token: validToken, bundleId: nil)) == .notFound)
        // The path kept is bounded.
        let long = try #require(asUnrouted(decide(target("/" + String(repeating: "x", count: 300), token: validToken))))
        #expect(long.path.utf8.count == UnroutedPath.maxBytes)
    }

    @Test("with unrouted.redirectTo, a valid token on a path no link serves is a link-out of that link, flagged")
    func unroutedRedirectTo() throws {
        var config = Self.config
        config.unroutedRedirectTo = "nl"
        let gateway = Gateway(config: config)
        let decision = gateway.decide(method: .get, target: Array(target("/nl/", token: validToken).utf8), nowMs: now)
        let redirect = try #require(asRedirect(decision))
        let plain = try #require(asRedirect(decide(target("/nl", token: validToken))))
        #expect(redirect.unroutedPath == "/nl/")
        #expect(redirect.location == plain.location && redirect.linkIndex == 0)
        guard case .token(let record) = redirect.record, case .token(let direct) = plain.record else {
            Issue.record("no token record")
            return
        }
        #expect(record.link == "unrouted" && record.path == "/nl/")
        #expect(record.destination == direct.destination && record.country == "nl")
    }

    @Test("a method other than GET or HEAD on a link is refused, with or without a token")
    func methodNotAllowed() {
        #expect(decide(target("/nl", token: validToken), method: .other) == .methodNotAllowed)
        #expect(decide("/nl", method: .other) == .methodNotAllowed)
        #expect(decide("/fr", method: .other) == .methodNotAllowed)
    }

    // MARK: Valid tokens

    @Test("GET with a valid token redirects to a configured destination with the externalPurchaseId and a record")
    func validGet() throws {
        let decision = decide(target("/nl", token: validToken))
        let redirect = try #require(asRedirect(decision))
        let destination = chosen(Self.nl, id: TokenBuilder.defaultId)
        #expect(Self.nl.destinations.map(\.url).contains(destination))
        #expect(redirect.location == destination + "?externalPurchaseId=" + TokenBuilder.defaultId)
        #expect(redirect.link == "nl")
        #expect(redirect.refusal == nil)
        let record = TokenRecord(token: TokenBuilder.token(), link: Self.nl, destination: destination, seenAt: now, stale: false)
        #expect(redirect.record == .token(record))
        #expect(record.country == "nl")
        #expect(record.environment == .production)
    }

    @Test("HEAD with a valid token answers like GET and records a visit flagged head, not a shopper's")
    func validHead() throws {
        let get = try #require(asRedirect(decide(target("/nl", token: validToken))))
        let head = try #require(asRedirect(decide(target("/nl", token: validToken), method: .head)))
        #expect(head.location == get.location)
        #expect(head.link == "nl")
        #expect(head.kind == .head)
        #expect(get.kind == .shopper)
        guard case .token(let record) = head.record else {
            Issue.record("no token record")
            return
        }
        #expect(record.kind == .head)
    }

    @Test("the parameter order and other parameters do not matter")
    func parameterOrder() throws {
        let expected = try #require(asRedirect(decide(target("/nl", token: validToken))))
        let reordered = try #require(asRedirect(decide("/nl?utm=1&bundleId=com.example&x&externalPurchaseToken=\(validToken)&y=2")))
        #expect(reordered == expected)
    }

    @Test("the same token always goes to the same destination; ids spread over both")
    func sticky() throws {
        var generator = F.SplitMix64(seed: 21)
        var seen: Set<String> = []
        for _ in 0..<200 {
            let id = F.randomUUID(using: &generator)
            let token = TokenMinter.mint(TokenBuilder.token(id: id))
            let first = try #require(asRedirect(decide(target("/nl", token: token))))
            let second = try #require(asRedirect(decide(target("/nl", token: token), now: now + 1000)))
            #expect(first.location == second.location)
            #expect(first.location == chosen(Self.nl, id: id) + "?externalPurchaseId=" + id)
            seen.insert(chosen(Self.nl, id: id))
        }
        #expect(seen == Set(Self.nl.destinations.map(\.url)))
    }

    @Test("a destination with its own query gets '&'")
    func destinationWithQuery() throws {
        let redirect = try #require(asRedirect(decide(target("/de/annual", token: validToken))))
        #expect(redirect.location == "https://checkout.example.com/de?plan=annual&externalPurchaseId=" + TokenBuilder.defaultId)
        #expect(redirect.link == "de-annual")
    }

    @Test("a sandbox token is recorded as sandbox, with its type and expiry")
    func sandbox() throws {
        let token = TokenBuilder.token(
            id: "SANDBOX_" + TokenBuilder.defaultId, type: .acquisition, expiration: AppleSampleToken.creationDate + 3_600_000)
        let redirect = try #require(asRedirect(decide(target("/de/annual", token: TokenMinter.mint(token)))))
        #expect(redirect.location == "https://checkout.example.com/de?plan=annual&externalPurchaseId=SANDBOX_" + TokenBuilder.defaultId)
        guard case .token(let record) = redirect.record else {
            Issue.record("no token record")
            return
        }
        #expect(record.environment == .sandbox)
        #expect(record.tokenType == .acquisition)
        #expect(record.tokenExpirationDate == AppleSampleToken.creationDate + 3_600_000)
        #expect(record.link == "de-annual")
        #expect(record.country == "de")
    }

    @Test("a token of a type Apple may still invent is redirected and recorded as sent, flagged")
    func unusualTokens() throws {
        #expect(try #require(asRedirect(decide(target("/de/annual", token: validToken)))).unusualToken == nil)
        let cases: [(json: String, type: String?, unusual: UnusualTokenType)] = [
            (
                F.json(extra: #""tokenType":"BRAND_NEW_KIND","tokenExpirationDate":\#(AppleSampleToken.creationDate + 3_600_000)"#),
                "BRAND_NEW_KIND", .unknownType
            ),
            (F.json(extra: #""tokenType":"ACQUISITION""#), "ACQUISITION", .typeWithoutExpiration),
            (F.json(extra: #""tokenExpirationDate":\#(AppleSampleToken.creationDate + 3_600_000)"#), nil, .expirationWithoutType),
        ]
        for (json, type, unusual) in cases {
            let redirect = try #require(asRedirect(decide(target("/de/annual", token: TokenBuilder.encoded(json)))), "\(json)")
            #expect(redirect.refusal == nil)
            #expect(redirect.unusualToken == unusual)
            guard case .token(let record) = redirect.record else {
                Issue.record("no token record")
                continue
            }
            #expect(record.tokenType?.rawValue == type)
        }
    }

    @Test("an old token is accepted and its record flagged stale")
    func stale() throws {
        let later = AppleSampleToken.creationDate + 3_600_001
        let redirect = try #require(asRedirect(decide(target("/de/annual", token: validToken), now: later)))
        guard case .token(let record) = redirect.record else {
            Issue.record("no token record")
            return
        }
        #expect(record.stale == true)
        #expect(record.seenAt == later)
    }

    @Test("Apple's sample token, in every accepted encoding, is accepted")
    func appleSample() throws {
        let json = Array(AppleSampleToken.json.utf8)
        let standard = F.standardBase64(json + [0x20])  // padded
        let percentPadded = standard.replacingOccurrences(of: "=", with: "%3D")
        let id = "00000000-0000-0000-0000-000000000000"
        for token in [AppleSampleToken.text, standard, percentPadded, TokenBase64.encodeURLSafe(json)] {
            let redirect = try #require(asRedirect(decide(target("/de/annual", token: token))))
            #expect(redirect.location == "https://checkout.example.com/de?plan=annual&externalPurchaseId=" + id)
        }
    }

    @Test("a token after a fragment is not read; a fragment after the query is ignored")
    func fragmentInTarget() throws {
        #expect(
            decide("/nl#x?externalPurchaseToken=\(validToken)&bundleId=com.example")
                == .reject(Refusal(rejection: TokenRejection(.missingToken), link: "nl", linkIndex: 0)))
        let redirect = try #require(asRedirect(decide(target("/nl", token: validToken) + "#frag&bundleId=evil")))
        #expect(redirect.location == chosen(Self.nl, id: TokenBuilder.defaultId) + "?externalPurchaseId=" + TokenBuilder.defaultId)
    }

    // MARK: Rejections

    @Test(
        "a refused token gives reject with the reason and the link id",
        arguments: [
            ("/nl", RejectReason.missingToken),
            ("/nl?bundleId=com.example", .missingToken),
            ("/nl?externalPurchaseToken=&bundleId=com.example", .missingToken),
            ("/nl?externalPurchaseToken&bundleId=com.example", .missingToken),
            ("/nl?externalPurchaseToken=abcd", .missingBundleId),
            ("/nl?externalPurchaseToken=abcd&bundleId=", .missingBundleId),
            ("/nl?externalPurchaseToken=abcd&bundleId=com.example&externalPurchaseToken=abcd", .duplicateParameter),
            ("/nl?externalPurchaseToken=ab%zz&bundleId=com.example", .malformedQuery),
            ("/nl?externalPurchaseToken=\(String(repeating: "A", count: 1025))&bundleId=com.example", .tokenTooLong),
            ("/nl?externalPurchaseToken=!!!!&bundleId=com.example", .tokenNotBase64),
            ("/nl?externalPurchaseToken=\(TokenBuilder.encoded("[]"))&bundleId=com.example", .tokenNotJSON),
            ("/nl?externalPurchaseToken=\(TokenBuilder.encoded("{}"))&bundleId=com.example", .missingField),
            ("/nl?externalPurchaseToken=\(TokenBuilder.encoded(Fixtures.json(appAppleId: "\"1\"")))&bundleId=com.example", .wrongFieldType),
            (
                "/nl?externalPurchaseToken=\(TokenBuilder.encoded(Fixtures.json(id: "\"x\"")))&bundleId=com.example",
                .invalidExternalPurchaseId
            ),
            ("/nl?externalPurchaseToken=\(TokenMinter.mint(TokenBuilder.token()))&bundleId=com.other", .bundleIdMismatch),
            (
                "/nl?externalPurchaseToken=\(TokenMinter.mint(TokenBuilder.token(bundleId: "com.unknown")))&bundleId=com.unknown",
                .unknownApp
            ),
            ("/nl?externalPurchaseToken=\(TokenMinter.mint(TokenBuilder.token(appAppleId: 7)))&bundleId=com.example", .appAppleIdMismatch),
            (
                "/nl?externalPurchaseToken=\(TokenMinter.mint(TokenBuilder.token(created: AppleSampleToken.creationDate + 305_001)))&bundleId=com.example",
                .createdInFuture
            ),
            (
                "/nl?externalPurchaseToken=\(TokenMinter.mint(TokenBuilder.token(type: .services, expiration: AppleSampleToken.creationDate + 5_000)))&bundleId=com.example",
                .expired
            ),
            (
                "/nl?externalPurchaseToken=\(TokenBuilder.encoded(Fixtures.json(extra: #""tokenType":"x y","tokenExpirationDate":1"#)))&bundleId=com.example",
                .invalidTokenType
            ),
        ])
    func rejection(_ target: String, _ reason: RejectReason) {
        let decision = decide(target)
        guard case .reject(let refusal) = decision else {
            Issue.record("expected reject(\(reason)), got \(decision)")
            return
        }
        #expect(refusal.rejection.reason == reason)
        #expect(refusal.link == "nl")
        // HEAD is refused the same way.
        #expect(decide(target, method: .head) == decision)
    }

    @Test("a rejection names the field where there is one")
    func rejectionField() {
        #expect(
            decide(target("/nl", token: TokenBuilder.encoded("{}")))
                == .reject(Refusal(rejection: TokenRejection(.missingField, field: .appAppleId), link: "nl", linkIndex: 0)))
        #expect(
            decide(target("/nl", token: validToken, bundleId: "com.other"))
                == .reject(Refusal(rejection: TokenRejection(.bundleIdMismatch, field: .bundleId), link: "nl", linkIndex: 0)))
    }

    // MARK: onInvalidToken: redirect

    @Test("a link set to redirect sends a refused shopper to its first destination, untokened")
    func redirectOnInvalid() throws {
        let redirect = try #require(asRedirect(decide("/fr")))
        #expect(redirect.location == "https://checkout.example.com/fr#top")
        #expect(redirect.link == "fr")
        #expect(redirect.refusal == TokenRejection(.missingToken))
        #expect(
            redirect.record
                == .untokened(
                    UntokenedVisit(
                        link: "fr", country: "fr", destination: "https://checkout.example.com/fr#top", reason: .refused(.missingToken),
                        seenAt: now)))

        let mismatch = try #require(asRedirect(decide(target("/fr", token: validToken, bundleId: "com.other"))))
        #expect(mismatch.location == "https://checkout.example.com/fr#top")
        #expect(mismatch.refusal == TokenRejection(.bundleIdMismatch, field: .bundleId))
        #expect(
            mismatch.record
                == .untokened(
                    UntokenedVisit(
                        link: "fr", country: "fr", destination: "https://checkout.example.com/fr#top", reason: .refused(.bundleIdMismatch),
                        seenAt: now)))
    }

    @Test("HEAD on a redirect-on-invalid link records an untokened visit flagged head")
    func redirectOnInvalidHead() throws {
        let redirect = try #require(asRedirect(decide("/fr?externalPurchaseToken=!!!!&bundleId=com.example", method: .head)))
        #expect(redirect.location == "https://checkout.example.com/fr#top")
        #expect(
            redirect.record
                == .untokened(
                    UntokenedVisit(
                        link: "fr", country: "fr", destination: "https://checkout.example.com/fr#top", reason: .refused(.tokenNotBase64),
                        seenAt: now, kind: .head)))
        #expect(redirect.refusal == TokenRejection(.tokenNotBase64))
    }

    @Test("a valid token on a redirect-on-invalid link is handled normally, fragment kept last")
    func redirectLinkWithValidToken() throws {
        let redirect = try #require(asRedirect(decide(target("/fr", token: validToken))))
        let destination = chosen(Self.fr, id: TokenBuilder.defaultId)
        let expected =
            destination == "https://checkout.example.com/fr#top"
            ? "https://checkout.example.com/fr?externalPurchaseId=\(TokenBuilder.defaultId)#top"
            : "\(destination)?externalPurchaseId=\(TokenBuilder.defaultId)"
        #expect(redirect.location == expected)
        #expect(redirect.refusal == nil)
        #expect(
            redirect.record
                == .token(TokenRecord(token: TokenBuilder.token(), link: Self.fr, destination: destination, seenAt: now, stale: false)))
    }

    // MARK: forwardToken

    @Test("forwardToken appends the token, re-encoded URL-safe, decoding to the same JSON")
    func forwardToken() throws {
        let json = Array(AppleSampleToken.json.utf8)
        let id = "00000000-0000-0000-0000-000000000000"
        // A padded, standard-alphabet, percent-escaped form on the way in.
        let incoming = F.standardBase64(json + [0x0A]).replacingOccurrences(of: "=", with: "%3D")
        for token in [AppleSampleToken.text, incoming] {
            let redirect = try #require(asRedirect(decide(target("/at", token: token))))
            let prefix = "https://checkout.example.com/at?externalPurchaseId=\(id)&externalPurchaseToken="
            #expect(redirect.location.hasPrefix(prefix))
            let forwarded = String(redirect.location.dropFirst(prefix.count))
            #expect(!forwarded.contains("=") && !forwarded.contains("+") && !forwarded.contains("/") && !forwarded.contains("&"))
            let decoded = try #require(TokenBase64.decode(forwarded.bytes))
            let expectedJSON = token == incoming ? json + [0x0A] : json
            #expect(decoded == expectedJSON)
            #expect(
                try TokenDecoder.decode(forwarded.bytes, maxLength: 4096).get()
                    == ExternalPurchaseToken(
                        appAppleId: 1_234_567_890, bundleId: "com.example", tokenCreationDate: AppleSampleToken.creationDate,
                        externalPurchaseId: id))
        }
    }

    @Test("links without forwardToken never carry the token")
    func noForwarding() throws {
        let redirect = try #require(asRedirect(decide(target("/nl", token: validToken))))
        #expect(!redirect.location.contains("externalPurchaseToken"))
        #expect(!redirect.location.contains(validToken))
    }

    // MARK: Query-string tricks

    private func expectSafeLocation(_ target: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let decision = decide(target)
        guard case .redirect(let redirect) = decision else {
            Issue.record("expected a redirect, got \(decision)", sourceLocation: sourceLocation)
            return
        }
        #expect(
            redirect.location == chosen(Self.nl, id: TokenBuilder.defaultId) + "?externalPurchaseId=" + TokenBuilder.defaultId,
            sourceLocation: sourceLocation)
    }

    @Test("other parameters cannot change the Location")
    func otherParametersCannotSteer() {
        expectSafeLocation(
            target("/nl", token: validToken, extra: "redirect=https://evil.example/&next=//evil.example&url=javascript:alert(1)"))
        expectSafeLocation(target("/nl", token: validToken, extra: "x=%0d%0aSet-Cookie:%20a=b&y=%0D%0ALocation:%20https://evil.example"))
        expectSafeLocation(target("/nl", token: validToken, extra: "externalPurchaseId=SANDBOX_evil&destination=https://evil.example"))
        expectSafeLocation(target("/nl", token: validToken, extra: "z=%ZZ&w=%"))
        expectSafeLocation(target("/nl", token: validToken, extra: "@evil.example"))
        for decision in [
            decide(target("/nl", token: validToken, extra: "x=%0d%0a")), decide(target("/at", token: validToken, extra: "x=\r\n")),
        ] {
            if case .redirect(let redirect) = decision {
                #expect(!redirect.location.contains("\r") && !redirect.location.contains("\n"))
            }
        }
    }

    @Test("a second bundleId or token is refused, not picked from")
    func duplicatesRefused() {
        let duplicates = [
            target("/nl", token: validToken, extra: "bundleId=com.example"),
            target("/nl", token: validToken, extra: "bundleId=com.other"),
            target("/nl", token: validToken, extra: "externalPurchaseToken=\(validToken)"),
            target(
                "/nl", token: validToken,
                extra: "externalPurchaseToken=\(TokenMinter.mint(TokenBuilder.token(id: "SANDBOX_" + TokenBuilder.defaultId)))"),
            target("/fr", token: validToken, extra: "bundleId=com.example&externalPurchaseToken=x"),
        ]
        for target in duplicates {
            let decision = decide(target)
            if target.hasPrefix("/fr") {
                guard case .redirect(let redirect) = decision else {
                    Issue.record("\(decision)")
                    continue
                }
                #expect(redirect.refusal == TokenRejection(.duplicateParameter))
                #expect(redirect.location == "https://checkout.example.com/fr#top")
            } else {
                #expect(decision == .reject(Refusal(rejection: TokenRejection(.duplicateParameter), link: "nl", linkIndex: 0)))
            }
        }
    }

    @Test("a path that only looks like a link, or points elsewhere, is not found")
    func pathTricks() {
        for path in ["//evil.example/nl", "/nl/..", "/nl/../fr", "/%2Fnl", "/nl%3F", "/nl;x", "\\nl", "/nl\r\n"] {
            expect404(decide(target(path, token: validToken)))
        }
    }

    @Test(
        "a token whose externalPurchaseId would bend the Location is refused",
        arguments: [
            "3f2504e0-4f89-41d3-9a0c-0305e82c3301\r\nSet-Cookie: a=b",
            "3f2504e0-4f89-41d3-9a0c-0305e82c33\r\n",
            "3f2504e0-4f89-41d3-9a0c-0305e82c3301/../../evil",
            "3f2504e0/4f89/41d3/9a0c/0305e82c3301",
            "//evil.example/3f2504e0-4f89-41d3-9a0c",
            "3f2504e0-4f89-41d3-9a0c-0305e82c3301#x",
            "3f2504e0-4f89-41d3-9a0c-0305e82c3301&x=1",
            "SANDBOX_../3f2504e0-4f89-41d3-9a0c-0305e82c",
            "3f2504e0-4f89-41d3-9a0c-0305e82c3301 ",
        ])
    func hostileExternalPurchaseId(_ id: String) {
        let token = TokenMinter.mint(TokenBuilder.token(id: id))
        #expect(
            decide(target("/nl", token: token))
                == .reject(
                    Refusal(rejection: TokenRejection(.invalidExternalPurchaseId, field: .externalPurchaseId), link: "nl", linkIndex: 0)))
        #expect(
            decide(target("/at", token: token))
                == .reject(
                    Refusal(rejection: TokenRejection(.invalidExternalPurchaseId, field: .externalPurchaseId), link: "at", linkIndex: 3)))
    }

    @Test("the Location always starts with a configured destination and has no CR, LF, space or backslash")
    func locationShape() {
        var generator = F.SplitMix64(seed: 22)
        let allDestinations = Self.config.links.flatMap(\.destinations).map(\.url)
        for _ in 0..<300 {
            let id = Bool.random(using: &generator) ? F.randomUUID(using: &generator) : "SANDBOX_" + F.randomUUID(using: &generator)
            let token = TokenMinter.mint(TokenBuilder.token(id: id))
            for link in Self.config.links {
                guard case .redirect(let redirect) = decide(target(link.path, token: token)) else {
                    Issue.record("no redirect for \(link.path)")
                    continue
                }
                let base = { (url: String) in String(url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]) }
                #expect(allDestinations.contains { redirect.location.hasPrefix(base($0)) })
                #expect(redirect.location.contains("externalPurchaseId=" + id))
                #expect(!redirect.location.utf8.contains { $0 <= 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\\") })
            }
        }
    }

    @Test("the shipped config's gateway redirects /nl, /de and /fr")
    func shippedConfig() throws {
        let path = ConfigLoaderTests.shippedConfigPath
        let bytes = try #require(FileManager.default.contents(atPath: path).map { Array($0) })
        let config = try ConfigLoader.load(json: bytes, baseDirectory: "/").get()
        let gateway = Gateway(config: config)
        for path in ["/nl", "/de", "/fr"] {
            let decision = gateway.decide(method: .get, target: Array(target(path, token: validToken).utf8), nowMs: now)
            let link = try #require(config.links.first { $0.path == path })
            guard case .redirect(let redirect) = decision else {
                Issue.record("\(path): \(decision)")
                continue
            }
            #expect(link.destinations.contains { redirect.location.hasPrefix($0.url) })
            #expect(redirect.location.hasSuffix("externalPurchaseId=" + TokenBuilder.defaultId))
        }
    }
}
