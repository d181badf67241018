import Foundation
import LinkOutTestSupport
import Testing

@testable import LinkOutCore

/// A request's headers, peer and GeoIP answer, as the server would give them.
struct TestContext: RequestContext {
    var headers: [String: String] = [:]
    var peer = "203.0.113.9"
    var geo: String?

    func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
    func peerAddress() -> String { peer }
    func geoCountry() -> String? { geo }
}

@Suite("Destination choice: health, countries, kinds, parameters, experiments")
struct DestinationRoutingTests {
    typealias F = Fixtures
    let now = AppleSampleToken.creationDate + 5_000

    static let apps = [AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890)]

    static func gateway(
        _ links: [Link], proxies: ProxySettings = ProxySettings(), signing: [UInt8]? = nil, health: DestinationHealthBoard? = nil
    ) -> Gateway {
        var config = GatewayConfig(tokens: F.policy, apps: apps, links: links)
        config.proxies = proxies
        if let signing { config.signing = SigningSettings(secretFile: "unused", secret: signing) }
        return Gateway(config: config, health: health)
    }

    func token(_ id: String = TokenBuilder.defaultId) -> String {
        TokenMinter.mint(TokenBuilder.token(id: id))
    }

    func redirect(
        _ gateway: Gateway, _ path: String, id: String = TokenBuilder.defaultId, extra: String = "", method: RequestMethod = .get,
        context: TestContext = TestContext(), at time: Int64? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Redirect? {
        let target = "\(path)?externalPurchaseToken=\(token(id))&bundleId=com.example" + (extra.isEmpty ? "" : "&" + extra)
        guard
            case .redirect(let redirect) = gateway.decide(method: method, target: Array(target.utf8), nowMs: time ?? now, context: context)
        else {
            Issue.record("expected a redirect", sourceLocation: sourceLocation)
            return nil
        }
        return redirect
    }

    func record(_ redirect: Redirect?) -> TokenRecord? {
        guard case .token(let record)? = redirect?.record else { return nil }
        return record
    }

    static func ids(_ count: Int) -> [String] {
        var generator = F.SplitMix64(seed: 7)
        return (0..<count).map { _ in F.randomUUID(using: &generator) }
    }

    // MARK: Health

    static let checked = Link(
        id: "nl", path: "/nl", country: "nl",
        destinations: [
            Destination(url: "https://a.example/nl", weight: 2, health: .origin),
            Destination(url: "https://b.example/nl", weight: 1, health: .url("https://b.example/healthz")),
            Destination(url: "https://c.example/nl", weight: 1, health: .origin),
        ])

    @Test("a down destination's tokens move to the healthy ones; tokens on healthy destinations stay put")
    func downDestinationLosesOnlyItsShare() throws {
        let board = DestinationHealthBoard()
        let gateway = Self.gateway([Self.checked], health: board)
        #expect(
            gateway.healthTargets == [
                HealthTarget.origin(of: "https://a.example/nl")!, HealthTarget(url: "https://b.example/healthz", method: .get),
                HealthTarget.origin(of: "https://c.example/nl")!,
            ])
        let ids = Self.ids(600)
        let before = ids.map { record(redirect(gateway, "/nl", id: $0))!.destination }
        #expect(Set(before).count == 3)

        board.slot(for: HealthTarget(url: "https://b.example/healthz", method: .get)).update(isUp: false, lastUpMs: 1)
        let during = ids.map { record(redirect(gateway, "/nl", id: $0))!.destination }
        #expect(!during.contains("https://b.example/nl"))
        for (old, new) in zip(before, during) where old != "https://b.example/nl" { #expect(old == new) }
        // b's share went to a and c by weight (2:1): a gets roughly twice what c gets of it.
        let moved = zip(before, during).filter { $0.0 == "https://b.example/nl" }.map(\.1)
        let toA = moved.filter { $0 == "https://a.example/nl" }.count
        #expect(toA > moved.count / 2)

        board.slot(for: HealthTarget(url: "https://b.example/healthz", method: .get)).update(isUp: true, lastUpMs: 2)
        let after = ids.map { record(redirect(gateway, "/nl", id: $0))!.destination }
        #expect(after == before)
    }

    @Test("all down: the link's fallback, flagged allDown; without a fallback, the one up most recently")
    func allDown() throws {
        let board = DestinationHealthBoard()
        var withFallback = Self.checked
        withFallback.fallback = "https://sorry.example/maintenance"
        let gateway = Self.gateway([withFallback], health: board)
        for target in gateway.healthTargets { board.slot(for: target).update(isUp: false, lastUpMs: 10) }
        let fellBack = try #require(redirect(gateway, "/nl"))
        #expect(fellBack.allDown)
        #expect(fellBack.location.hasPrefix("https://sorry.example/maintenance?externalPurchaseId="))
        #expect(record(fellBack)?.destination == "https://sorry.example/maintenance")
        #expect(withFallback.destinationURLs[fellBack.destinationIndex] == "https://sorry.example/maintenance")

        let plain = Self.gateway([Self.checked], health: board)
        board.slot(for: HealthTarget.origin(of: "https://c.example/nl")!).update(isUp: false, lastUpMs: 99)
        for id in Self.ids(20) {
            let chosen = try #require(redirect(plain, "/nl", id: id))
            #expect(chosen.allDown)
            #expect(record(chosen)?.destination == "https://c.example/nl")
        }
    }

    @Test("a destination without a health check is always up: with every checked one down, it takes all")
    func uncheckedAreUp() throws {
        let mixed = Link(
            id: "nl", path: "/nl", country: "nl",
            destinations: [
                Destination(url: "https://a.example/nl", weight: 5, health: .origin),
                Destination(url: "https://unchecked.example/nl", weight: 1),
            ])
        let board = DestinationHealthBoard()
        let gateway = Self.gateway([mixed], health: board)
        #expect(gateway.healthTargets.count == 1)
        for target in gateway.healthTargets { board.slot(for: target).update(isUp: false, lastUpMs: 0) }
        for id in Self.ids(50) {
            let answer = try #require(redirect(gateway, "/nl", id: id))
            #expect(!answer.allDown)
            #expect(record(answer)?.destination == "https://unchecked.example/nl")
        }
        // Without a board (health checks off), every destination counts as up.
        #expect(Set(Self.ids(50).compactMap { record(redirect(Self.gateway([mixed]), "/nl", id: $0))?.destination }).count == 2)
    }

    // MARK: Countries

    static let shared = Link(
        id: "eu", path: "/eu", country: "nl",
        destinations: [Destination(url: "https://shop.example/nl")],
        countries: [
            CountryDestinations(country: "be", destinations: [Destination(url: "https://shop.example/be")]),
            CountryDestinations(country: "lu"),
        ])
    static let trusted = ProxySettings(trusted: TrustedProxies(ranges: ["10.0.0.0/8"])!, countryHeader: "CF-IPCountry")

    @Test(
        "a trusted proxy's country header picks the country's destinations",
        arguments: [
            ("BE", "be", "https://shop.example/be"), ("be", "be", "https://shop.example/be"), (" LU ", "lu", "https://shop.example/nl"),
            ("NL", "nl", "https://shop.example/nl"),
            // Served by no set of this link, pseudo-codes, junk: the link's own country.
            ("US", "nl", "https://shop.example/nl"), ("XX", "nl", "https://shop.example/nl"), ("T1", "nl", "https://shop.example/nl"),
            ("ZZ", "nl", "https://shop.example/nl"), ("EU", "nl", "https://shop.example/nl"), ("b", "nl", "https://shop.example/nl"),
            ("", "nl", "https://shop.example/nl"),
        ])
    func countryHeader(value: String, country: String, destination: String) throws {
        let gateway = Self.gateway([Self.shared], proxies: Self.trusted)
        let context = TestContext(headers: ["CF-IPCountry": value], peer: "10.1.2.3")
        let visit = try #require(record(redirect(gateway, "/eu", context: context)))
        #expect(visit.country == country)
        #expect(visit.destination == destination)
    }

    @Test("the header counts only from a trusted peer; otherwise GeoIP, then the default")
    func headerTrust() throws {
        let gateway = Self.gateway([Self.shared], proxies: Self.trusted)
        let untrusted = TestContext(headers: ["CF-IPCountry": "BE"], peer: "203.0.113.9")
        #expect(record(redirect(gateway, "/eu", context: untrusted))?.country == "nl")
        let untrustedWithGeo = TestContext(headers: ["CF-IPCountry": "BE"], peer: "203.0.113.9", geo: "lu")
        #expect(record(redirect(gateway, "/eu", context: untrustedWithGeo))?.country == "lu")
        let unknownHeaderThenGeo = TestContext(headers: ["CF-IPCountry": "XX"], peer: "10.0.0.1", geo: "be")
        #expect(record(redirect(gateway, "/eu", context: unknownHeaderThenGeo))?.country == "be")
        // No header configured: only GeoIP.
        let noHeader = Self.gateway([Self.shared])
        #expect(record(redirect(noHeader, "/eu", context: TestContext(headers: ["CF-IPCountry": "BE"], peer: "10.0.0.1")))?.country == "nl")
        #expect(record(redirect(noHeader, "/eu", context: TestContext(geo: "be")))?.country == "be")
    }

    @Test("a single-country link ignores the header and GeoIP")
    func singleCountryLink() throws {
        let single = Link(id: "de", path: "/de", country: "de", destinations: [Destination(url: "https://shop.example/de")])
        let gateway = Self.gateway([single], proxies: Self.trusted)
        let context = TestContext(headers: ["CF-IPCountry": "BE"], peer: "10.0.0.1", geo: "be")
        #expect(record(redirect(gateway, "/de", context: context))?.country == "de")
    }

    // MARK: Kinds

    @Test(
        "prefetches, HEAD and bots are flagged; a shopper's Safari is not",
        arguments: [
            (["Purpose": "prefetch"], RequestMethod.get, VisitKind.prefetch),
            (["Sec-Purpose": "prefetch;prerender"], .get, .prefetch),
            (["User-Agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"], .get, .bot),
            (["User-Agent": "facebookexternalhit/1.1"], .get, .bot),
            (["User-Agent": "WhatsApp/2.23.20.0"], .get, .bot),
            (["User-Agent": "curl/8.4.0"], .get, .bot),
            (
                [
                    "User-Agent":
                        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1"
                ], .get, .shopper
            ),
            ([:], .get, .shopper),
            ([:], .head, .head),
        ])
    func kinds(headers: [String: String], method: RequestMethod, kind: VisitKind) throws {
        let gateway = Self.gateway([Self.shared])
        let answer = try #require(redirect(gateway, "/eu", method: method, context: TestContext(headers: headers)))
        #expect(answer.kind == kind)
        #expect(record(answer)?.kind == kind)
    }

    @Test("extra bot patterns from the config, matched case-insensitively")
    func extraBotPatterns() {
        let rules = BotRules(extra: ["AcmeMonitor"])
        #expect(rules.isBot("Mozilla/5.0 acmemonitor/3"))
        #expect(!BotRules.defaults.isBot("Mozilla/5.0 acmemonitor/3"))
    }

    // MARK: Parameters

    static func parameterLink(
        _ configure: (inout CheckoutParameters) -> Void, url: String = "https://shop.example/nl?plan=annual&utm_source=app#pay"
    ) -> Link {
        var parameters = CheckoutParameters()
        configure(&parameters)
        return Link(id: "nl-1", path: "/nl", country: "nl", destinations: [Destination(url: url)], parameters: parameters)
    }

    @Test("every parameter option, in a fixed order, before the fragment")
    func everyOption() throws {
        let link = Self.parameterLink {
            $0.country = true
            $0.link = true
            $0.token = true
            $0.signedReference = true
        }
        let secret = Array("0123456789abcdef0123456789abcdef".utf8)
        let gateway = Self.gateway([link], signing: secret)
        let location = try #require(redirect(gateway, "/nl")?.location)
        let expectedStart =
            "https://shop.example/nl?plan=annual&utm_source=app&externalPurchaseId=\(TokenBuilder.defaultId)&linkoutRef=v1.\(TokenBuilder.defaultId).\((now) / 1000).nl-1.nl."
        #expect(location.hasPrefix(expectedStart))
        #expect(location.contains("&country=nl&link=nl-1&externalPurchaseToken="))
        #expect(location.hasSuffix("#pay"))
    }

    @Test("the signed reference verifies with the secret, and fails with another or when edited")
    func signedReference() throws {
        let link = Self.parameterLink({ $0.signedReference = true }, url: "https://shop.example/nl")
        let secret = Array("0123456789abcdef0123456789abcdef".utf8)
        let gateway = Self.gateway([link], signing: secret)
        let location = try #require(redirect(gateway, "/nl")?.location)
        let reference = try #require(location.split(separator: "&").first { $0.hasPrefix("linkoutRef=") }?.dropFirst("linkoutRef=".count))
        let fields = try #require(SignedReference(secret: secret).verify(String(reference)))
        #expect(fields.externalPurchaseId == TokenBuilder.defaultId)
        #expect(fields.seenAtSeconds == now / 1000)
        #expect(fields.link == "nl-1")
        #expect(fields.country == "nl")
        #expect(SignedReference(secret: Array("another secret of thirty-two bytes".utf8)).verify(String(reference)) == nil)
        #expect(SignedReference(secret: secret).verify(String(reference).replacingOccurrences(of: ".nl-1.", with: ".nl-2.")) == nil)
    }

    @Test("HMAC-SHA256 matches RFC 4231's test case 2")
    func hmacVector() {
        let mac = SignedReference(secret: Array("Jefe".utf8)).authenticationCode(Array("what do ya want for nothing?".utf8))
        #expect(mac.map { String(format: "%02x", $0) }.joined() == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("passThrough copies matching parameters, never linkout's or the destination's own, and encodes hostile bytes")
    func passThrough() throws {
        let link = Self.parameterLink {
            $0.passThrough = [ParameterPattern("utm_*")!, ParameterPattern("ref")!]
        }
        let gateway = Self.gateway([link])
        let location = try #require(
            redirect(
                gateway, "/nl",
                extra: "utm_campaign=spring%20sale&utm_source=evil&ref=a+b&other=x&utm_medium=%0d%0aSet-Cookie:x&utm_term=%zz&ref=second"
            ).map(\.location))
        #expect(
            location
                == "https://shop.example/nl?plan=annual&utm_source=app&externalPurchaseId=\(TokenBuilder.defaultId)&utm_campaign=spring%20sale&ref=a+b&utm_medium=%0d%0aSet-Cookie%3Ax&utm_term=%25zz#pay"
        )
    }

    @Test("pass-through values cannot end the query, start a fragment or leave printable ASCII")
    func passThroughHostile() throws {
        let link = Self.parameterLink({ $0.passThrough = [ParameterPattern("utm_*")!] }, url: "https://shop.example/nl")
        let gateway = Self.gateway([link])
        for value in ["a#b", "a\"b", "é", "a%", "//evil.example", "\\evil", "a=b", "<script>"] {
            let raw = value.utf8.map { byte -> String in
                // Send the raw bytes where a browser could (the query string allows most), else escaped.
                byte < 0x80 && byte != UInt8(ascii: "#") && byte != UInt8(ascii: "&")
                    ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
            }.joined()
            guard let location = redirect(gateway, "/nl", extra: "utm_x=" + raw)?.location else { continue }
            #expect(location.hasPrefix("https://shop.example/nl?externalPurchaseId=\(TokenBuilder.defaultId)&utm_x="))
            #expect(!location.contains("#"))
            #expect(
                location.utf8.allSatisfy {
                    $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "<") && $0 != UInt8(ascii: "\\")
                })
        }
    }

    @Test("at most 16 pass-through parameters, each at most 512 bytes once encoded")
    func passThroughLimits() throws {
        let link = Self.parameterLink({ $0.passThrough = [ParameterPattern("p*")!] }, url: "https://shop.example/nl")
        let gateway = Self.gateway([link])
        let many = (0..<20).map { "p\($0)=v" }.joined(separator: "&")
        let location = try #require(redirect(gateway, "/nl", extra: many + "&plong=" + String(repeating: "x", count: 600))?.location)
        #expect(location.components(separatedBy: "&p").count - 1 == 16)
        #expect(!location.contains("plong"))
    }

    @Test("externalPurchaseId can be left out when the signed reference carries it")
    func withoutId() throws {
        let link = Self.parameterLink(
            {
                $0.externalPurchaseId = false
                $0.signedReference = true
            }, url: "https://shop.example/nl")
        let gateway = Self.gateway([link], signing: Array(repeating: 7, count: 32))
        let location = try #require(redirect(gateway, "/nl")?.location)
        #expect(location.hasPrefix("https://shop.example/nl?linkoutRef=v1.\(TokenBuilder.defaultId)."))
    }

    // MARK: Experiments

    static let experimentLink = Link(
        id: "nl", path: "/nl", country: "nl", destinations: [Destination(url: "https://shop.example/nl")],
        experiment: Experiment(
            name: "price-test", endsAtMs: UTCDate.parse("2024-02-01")!,
            variants: [
                Experiment.Variant(name: "control", destination: Destination(url: "https://shop.example/nl?v=a", weight: 1)),
                Experiment.Variant(name: "annual-first", destination: Destination(url: "https://shop.example/nl?v=b", weight: 1)),
            ]))

    @Test("a running experiment splits by variant, sticky per token, and records both names")
    func runningExperiment() throws {
        let gateway = Self.gateway([Self.experimentLink])
        var counts: [String: Int] = [:]
        for id in Self.ids(1000) {
            let first = try #require(record(redirect(gateway, "/nl", id: id)))
            let again = try #require(record(redirect(gateway, "/nl", id: id)))
            #expect(first.variant == again.variant)
            #expect(first.experiment == "price-test")
            #expect(first.destination == (first.variant == "control" ? "https://shop.example/nl?v=a" : "https://shop.example/nl?v=b"))
            counts[first.variant!, default: 0] += 1
        }
        #expect((400...600).contains(counts["control"] ?? 0))
    }

    @Test("with every variant down, the fallback's visit is in no experiment")
    func experimentAllDown() throws {
        var link = Self.experimentLink
        link.fallback = "https://sorry.example/"
        link.experiment!.variants = link.experiment!.variants.map { variant in
            var checked = variant
            checked.destination.health = .origin
            return checked
        }
        let board = DestinationHealthBoard()
        let gateway = Self.gateway([link], health: board)
        for target in gateway.healthTargets { board.slot(for: target).update(isUp: false, lastUpMs: 0) }
        let visit = try #require(record(redirect(gateway, "/nl")))
        #expect(visit.destination == "https://sorry.example/")
        #expect(visit.experiment == nil && visit.variant == nil)
        #expect(gateway.setsWithEveryDestinationDown(atMs: now).map(\.name) == ["nl/experiment:price-test"])
        #expect(gateway.setsWithEveryDestinationDown(atMs: UTCDate.parse("2024-02-01")!).isEmpty, "an ended experiment is no set")
    }

    @Test("after its end, the link's destinations serve again and visits carry no variant")
    func endedExperiment() throws {
        let gateway = Self.gateway([Self.experimentLink])
        let end = UTCDate.parse("2024-02-01")!
        // The token must still be fresh at that time: mint one created just before.
        let id = TokenBuilder.defaultId
        let token = TokenMinter.mint(TokenBuilder.token(created: end - 1000, id: id))
        guard
            case .redirect(let answer) = gateway.decide(
                method: .get, target: Array("/nl?externalPurchaseToken=\(token)&bundleId=com.example".utf8), nowMs: end,
                context: TestContext())
        else {
            Issue.record("expected a redirect")
            return
        }
        let visit = try #require(record(answer))
        #expect(visit.destination == "https://shop.example/nl")
        #expect(visit.experiment == nil)
        #expect(visit.variant == nil)
    }

    @Test(
        "UTC dates: the two forms, and nothing else",
        arguments: [
            ("2024-02-01", Int64?(1_706_745_600_000)), ("2024-02-29T12:30:15Z", 1_709_209_815_000), ("1970-01-01", 0),
            ("2023-02-29", nil), ("2024-13-01", nil), ("2024-02-01T24:00:00Z", nil), ("2024-02-01T10:00:00+01:00", nil),
            ("2024-2-1", nil), ("", nil), ("2024-02-01T10:00:00", nil),
        ])
    func dates(text: String, expected: Int64?) {
        #expect(UTCDate.parse(text) == expected)
    }
}
