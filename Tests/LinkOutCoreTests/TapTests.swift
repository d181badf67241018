import Foundation
import LinkOutTestSupport
import Testing

@testable import LinkOutCore

/// Links that expect no token (`token: "none"`): a request without one is a tap, sent on with the
/// link's usual choice and recorded as an untokened visit of reason `tap`, never a refusal; a token that
/// arrives anyway is handled as on any link.
@Suite("Taps on links that expect no token")
struct TapTests: ConfigChecking {
    typealias C = ConfigLoaderTests

    @Test("a tap is a shopper's request on a token-less link; a bot's, a prefetch's or a HEAD's is not, nor a refusal")
    func whatATapIs() {
        func visit(_ reason: UntokenedReason, _ kind: VisitKind) -> UntokenedVisit {
            UntokenedVisit(link: "us", country: "us", destination: "https://a.example/", reason: reason, seenAt: 0, kind: kind)
        }
        #expect(Tap.isTap(visit(.tap, .shopper)))
        for kind in [VisitKind.bot, .prefetch, .head] { #expect(!Tap.isTap(visit(.tap, kind)), "\(kind)") }
        #expect(!Tap.isTap(visit(.refused(.missingToken), .shopper)))
        #expect(Tap.storedReason == "tap" && Tap.storedKind == "shopper")
    }

    static let us = Link(
        id: "us", path: "/us", country: "us",
        destinations: [
            Destination(url: "https://checkout.example.com/us", weight: 3),
            Destination(url: "https://checkout-b.example.com/us#pay", weight: 1),
        ],
        parameters: {
            var parameters = CheckoutParameters()
            parameters.country = true
            parameters.link = true
            parameters.passThrough = [ParameterPattern("utm_*")!]
            return parameters
        }(),
        token: .notExpected)
    static let trial = Link(
        id: "trial", path: "/trial", country: "us", destinations: [Destination(url: "https://checkout.example.com/trial")],
        experiment: Experiment(
            name: "price", endsAtMs: Int64.max,
            variants: [
                .init(name: "a", destination: Destination(url: "https://checkout.example.com/trial?v=a")),
                .init(name: "b", destination: Destination(url: "https://checkout.example.com/trial?v=b")),
            ]),
        token: .notExpected)
    static let nl = Link(id: "nl", path: "/nl", country: "nl", destinations: [Destination(url: "https://checkout.example.com/nl")])

    let gateway = Gateway(
        config: GatewayConfig(
            apps: [AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890)], links: [us, trial, nl]))
    let now = AppleSampleToken.creationDate + 5_000

    /// A request from `client`, with no headers.
    struct Client: RequestContext {
        var address: String
        func header(_ name: String) -> String? { nil }
        func peerAddress() -> String { "10.0.0.1" }
        func geoCountry() -> String? { nil }
        func clientAddress() -> String { address }
    }

    private func redirect(
        _ target: String, method: RequestMethod = .get, client: String = "203.0.113.7", sourceLocation: SourceLocation = #_sourceLocation
    ) -> Redirect? {
        guard
            case .redirect(let redirect) = gateway.decide(
                method: method, target: Array(target.utf8), nowMs: now, context: Client(address: client))
        else {
            Issue.record("expected a redirect for \(target)", sourceLocation: sourceLocation)
            return nil
        }
        return redirect
    }

    @Test("no token: a tap, sent on with the parameters that need none, recorded as reason tap, no refusal")
    func tap() throws {
        let sent = try #require(redirect("/us?utm_source=mail&bundleId=com.example"))
        #expect(sent.refusal == nil)
        #expect(sent.location.hasPrefix(String(sent.record.destination.split(separator: "#")[0]) + "?"))
        #expect(
            sent.location.hasSuffix("country=us&link=us&utm_source=mail")
                || sent.location.hasSuffix("country=us&link=us&utm_source=mail#pay"), "\(sent.location)")
        #expect(!sent.location.contains("externalPurchaseId") && !sent.location.contains("linkoutRef"))
        #expect(
            sent.record
                == .untokened(
                    UntokenedVisit(
                        link: "us", country: "us", destination: sent.record.destination, reason: .tap, seenAt: now)))
        // An empty token is no token; a HEAD's tap is flagged as such.
        #expect(try #require(redirect("/us?externalPurchaseToken=")).record.untokenedReason == .tap)
        let head = try #require(redirect("/us", method: .head))
        #expect(head.kind == .head && head.record.untokenedReason == .tap)
    }

    @Test("the usual weighted choice, kept per client as a token keeps it, and a running experiment's variants")
    func destinationChoice() throws {
        var chosen: [String: Int] = [:]
        for index in 0..<400 {
            let client = "198.51.100.\(index % 250).\(index)"
            let first = try #require(redirect("/us", client: client)).record.destination
            #expect(try #require(redirect("/us", client: client)).record.destination == first, "the same shopper, the same destination")
            chosen[first, default: 0] += 1
        }
        let main = chosen["https://checkout.example.com/us"] ?? 0
        #expect((250...350).contains(main), "weights 3:1 over 400 clients: \(chosen)")
        var variants: Set<String> = []
        for index in 0..<40 { variants.insert(try #require(redirect("/trial", client: "192.0.2.\(index)")).location) }
        #expect(variants == ["https://checkout.example.com/trial?v=a", "https://checkout.example.com/trial?v=b"])
    }

    @Test("a token on such a link is handled as on any link: a valid one recorded, a refused one refused")
    func tokenArrivesAnyway() throws {
        let valid = TokenMinter.mint(TokenBuilder.token())
        let sent = try #require(redirect("/us?externalPurchaseToken=\(valid)&bundleId=com.example"))
        guard case .token(let record) = sent.record else {
            Issue.record("expected a token record")
            return
        }
        #expect(record.externalPurchaseId == TokenBuilder.defaultId && record.link == "us")
        #expect(sent.location.contains("externalPurchaseId=\(TokenBuilder.defaultId)"))
        let refused = gateway.decide(method: .get, target: Array("/us?externalPurchaseToken=!!!!&bundleId=com.example".utf8), nowMs: now)
        #expect(refused == .reject(Refusal(rejection: TokenRejection(.tokenNotBase64), link: "us", linkIndex: 0)))
        // A query that cannot be read is no tap either.
        guard case .reject = gateway.decide(method: .get, target: Array("/us?bundleId=a&bundleId=b".utf8), nowMs: now) else {
            Issue.record("a duplicate parameter is refused as on any link")
            return
        }
    }

    @Test("a link that requires a token still refuses a request without one")
    func requiredStillRefuses() {
        #expect(
            gateway.decide(method: .get, target: Array("/nl".utf8), nowMs: now)
                == .reject(Refusal(rejection: TokenRejection(.missingToken), link: "nl", linkIndex: 2)))
    }

    @Test("the reason is stored as its refusal code or tap, and read back")
    func storedReason() {
        #expect(UntokenedReason.tap.stored == "tap")
        #expect(UntokenedReason.refused(.missingToken).stored == "missing_token")
        #expect(UntokenedReason(stored: "tap") == .tap)
        #expect(UntokenedReason(stored: "missing_token") == .refused(.missingToken))
        #expect(UntokenedReason(stored: "unknown_token_type") == .refused(.invalidTokenType))
        #expect(UntokenedReason(stored: "tapped") == nil)
        #expect(!RejectReason.allCases.contains { $0.rawValue == "tap" }, "no refusal code may read as a tap")
    }

    @Test("config: token is required by default, none on request, anything else refused by name")
    func config() throws {
        let plain = try load(C.config()).get()
        #expect(plain.links[0].token == .required)
        let none = try load(C.config(links: "[\(C.link(extra: #""token": "none""#))]")).get()
        #expect(none.links[0].token == .notExpected)
        expectProblem(
            C.config(links: "[\(C.link(extra: #""token": "optional""#))]"), key: "links[0].token",
            rule: "must be 'required' (StoreKit appends a token) or 'none'")
        expectProblem(C.config(links: "[\(C.link(extra: #""token": false"#))]"), key: "links[0].token", rule: "must be a string")
    }

    @Test("the Info.plist keys leave out a link that expects no token, and lint does not ask for it")
    func plist() throws {
        let config = GatewayConfig(apps: [], links: [Self.nl, Self.us])
        let links = try PlistGenerator.links(for: config, baseURL: "https://pay.example.com").get()
        #expect(links == ExternalPurchaseLinks(links: ["nl": "https://pay.example.com/nl"], multiLinks: nil))
        #expect(PlistLinter.lint(links, config: config) == [])
    }
}

extension VisitRecord {
    /// The destination recorded, whatever the kind of record.
    var destination: String {
        switch self {
        case .token(let record): record.destination
        case .untokened(let visit): visit.destination
        }
    }

    var untokenedReason: UntokenedReason? {
        if case .untokened(let visit) = self { visit.reason } else { nil }
    }
}
