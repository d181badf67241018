import Foundation
import Testing

@testable import LinkOutCore

/// The keys of issue 7: health checks, shared links, fallbacks, parameters, experiments, bots, signing.
@Suite("ConfigLoader: destination choice")
struct ConfigLoaderRoutingTests: ConfigChecking {
    typealias C = ConfigLoaderTests

    @Test("unrouted.redirectTo must name a configured link")
    func unroutedRedirectTo() throws {
        let link = C.link(id: #""nl""#, path: #""/nl""#, destinations: #"[{"url":"https://a.example/nl"}]"#)
        let config = try load(C.config(links: "[\(link)]", extra: #""unrouted": {"redirectTo": "nl"}"#)).get()
        #expect(config.unroutedRedirectTo == "nl")
        #expect(try load(C.config(links: "[\(link)]")).get().unroutedRedirectTo == nil)
        expectProblem(
            C.config(links: "[\(link)]", extra: #""unrouted": {"redirectTo": "de"}"#), key: "unrouted.redirectTo",
            rule: "must be the id of a link")
        expectProblem(C.config(links: "[\(link)]", extra: #""unrouted": {"redirect": "nl"}"#), key: "unrouted.redirect", rule: "unknown")
    }

    @Test("every new key is read")
    func everything() throws {
        let link = C.link(
            id: #""eu""#, path: #""/eu""#,
            destinations:
                #"[{"url":"https://a.example/nl","weight":2,"health":"origin"},{"url":"https://b.example/nl","health":"http://10.0.0.5:8080/healthz"}]"#,
            extra: #"""
                "countries": {"be": {"destinations": [{"url": "https://a.example/be"}]}, "lu": {}},
                "fallback": "https://sorry.example/",
                "parameters": {"signedReference": true, "country": true, "link": true, "passThrough": ["utm_*", "gclid"]},
                "experiment": {"name": "price-test", "endsAt": "2026-12-31T18:00:00Z", "variants": [
                    {"name": "control", "url": "https://a.example/nl?v=a"}, {"name": "b", "url": "https://a.example/nl?v=b", "weight": 3, "health": "origin"}]}
                """#)
        let json = C.config(
            links: "[\(link)]",
            extra: #"""
                "healthChecks": {"intervalSeconds": 2.5, "timeoutMs": 1500, "downAfter": 2, "upAfter": 4, "caFile": "ca.pem"},
                "geoip": {"database": "GeoLite2-Country.mmdb"},
                "bots": {"userAgents": ["AcmeMonitor"]},
                "signing": {"secretFile": "secret"},
                "proxies": {"trusted": ["10.0.0.0/8"], "countryHeader": "CF-IPCountry"}
                """#)
        let config = try load(json).get()
        #expect(config.healthChecks.intervalMs == 2500)
        #expect(config.healthChecks.timeoutMs == 1500)
        #expect(config.healthChecks.downAfter == 2)
        #expect(config.healthChecks.upAfter == 4)
        #expect(config.healthChecks.caFile == "/etc/linkout/ca.pem")
        #expect(config.geoIPDatabase == "/etc/linkout/GeoLite2-Country.mmdb")
        #expect(config.bots.isBot("acmemonitor/1"))
        #expect(config.signing == SigningSettings(secretFile: "/etc/linkout/secret"))
        #expect(config.proxies.countryHeader == "CF-IPCountry")
        let eu = config.links[0]
        #expect(eu.destinations[0].health == .origin)
        #expect(eu.destinations[1].health == .url("http://10.0.0.5:8080/healthz"))
        #expect(
            eu.countries == [
                CountryDestinations(country: "be", destinations: [Destination(url: "https://a.example/be")]),
                CountryDestinations(country: "lu"),
            ])
        #expect(eu.servedCountries == ["nl", "be", "lu"])
        #expect(eu.fallback == "https://sorry.example/")
        #expect(eu.parameters.externalPurchaseId && eu.parameters.signedReference && eu.parameters.country && eu.parameters.link)
        #expect(!eu.parameters.token)
        #expect(eu.parameters.passThrough.map(\.text) == ["utm_*", "gclid"])
        #expect(eu.experiment?.name == "price-test")
        #expect(eu.experiment?.endsAtMs == UTCDate.parse("2026-12-31T18:00:00Z"))
        #expect(eu.experiment?.variants.map(\.name) == ["control", "b"])
        #expect(eu.experiment?.variants[1].destination == Destination(url: "https://a.example/nl?v=b", weight: 3, health: .origin))
        #expect(
            eu.destinationURLs == [
                "https://a.example/nl", "https://b.example/nl", "https://a.example/be", "https://a.example/nl?v=a",
                "https://a.example/nl?v=b", "https://sorry.example/",
            ])
    }

    @Test("without the new keys: no checks, no countries, externalPurchaseId only")
    func defaults() throws {
        let config = try load(C.config()).get()
        #expect(config.healthChecks == HealthCheckSettings())
        #expect(config.geoIPDatabase == nil)
        #expect(config.signing == nil)
        #expect(config.links[0].parameters == CheckoutParameters())
        #expect(config.links[0].countries.isEmpty)
        #expect(config.links[0].experiment == nil)
    }

    @Test("forwardToken is still read, as parameters.token")
    func forwardTokenAlias() throws {
        let config = try load(C.config(links: "[\(C.link(extra: #""forwardToken": true"#))]")).get()
        #expect(config.links[0].parameters.token)
    }

    @Test(
        "bad values are named by key",
        arguments: [
            (#""health": "ftp://x.example/""#, "links[0].destinations[0].health", "must be \"origin\" or an http"),
            (#""health": true"#, "links[0].destinations[0].health", "must be a string"),
        ])
    func badHealth(member: String, key: String, rule: String) {
        let destinations = "[{\"url\":\"https://a.example/\",\(member)}]"
        expectProblem(C.config(links: "[\(C.link(destinations: destinations))]"), key: key, rule: rule)
    }

    @Test(
        "bad link keys are named",
        arguments: [
            (#""countries": {"xx": {}}"#, "links[0].countries.xx", "unknown country code"),
            (#""countries": {"nl": {}}"#, "links[0].countries.nl", "the link's own country"),
            (#""countries": {"be": {"destinations": []}}"#, "links[0].countries.be.destinations", "at least one"),
            (#""countries": {"be": {"weight": 1}}"#, "links[0].countries.be.weight", "unknown key"),
            (#""fallback": "http://x.example/""#, "links[0].fallback", "https"),
            (#""parameters": {"passThrough": ["utm_**"]}"#, "links[0].parameters.passThrough[0]", "parameter name"),
            (#""parameters": {"passThrough": ["externalPurchaseId"]}"#, "links[0].parameters.passThrough[0]", "linkout's own"),
            (#""parameters": {"externalPurchaseId": false}"#, "links[0].parameters.externalPurchaseId", "cannot be false"),
            (#""parameters": {"signedReference": true}"#, "links[0].parameters.signedReference", "needs a signing secret"),
            (#""parameters": {"colour": true}"#, "links[0].parameters.colour", "unknown key"),
            (
                #""experiment": {"name": "t", "endsAt": "31/12/2026", "variants": [{"name":"a","url":"https://a.example/"},{"name":"b","url":"https://b.example/"}]}"#,
                "links[0].experiment.endsAt", "UTC date"
            ),
            (
                #""experiment": {"name": "t", "endsAt": "2026-12-31", "variants": [{"name":"a","url":"https://a.example/"}]}"#,
                "links[0].experiment.variants", "at least two"
            ),
            (
                #""experiment": {"name": "t", "endsAt": "2026-12-31", "variants": [{"name":"a","url":"https://a.example/"},{"name":"a","url":"https://b.example/"}]}"#,
                "links[0].experiment.variants[1].name", "duplicate"
            ),
            (
                #""experiment": {"name": "t", "endsAt": "2026-12-31", "variants": [{"name":"a","url":"https://a.example/"},{"name":"b","url":"https://a.example/"}]}"#,
                "links[0].experiment.variants[1].url", "share a URL"
            ),
            (
                #""experiment": {"name": "T T", "endsAt": "2026-12-31", "variants": [{"name":"a","url":"https://a.example/"},{"name":"b","url":"https://b.example/"}]}"#,
                "links[0].experiment.name", "lowercase"
            ),
        ])
    func badLinkKeys(member: String, key: String, rule: String) {
        expectProblem(C.config(links: "[\(C.link(extra: member))]"), key: key, rule: rule)
    }

    @Test("a link asking for a signed reference without a secret is named by its place in the file")
    func signingNamesTheRightLink() {
        let broken = C.link(id: #""BAD""#)
        let signing = C.link(id: #""de""#, path: #""/de""#, country: #""de""#, extra: #""parameters": {"signedReference": true}"#)
        expectProblem(C.config(links: "[\(broken),\(signing)]"), key: "links[1].parameters.signedReference", rule: "needs a signing secret")
    }

    @Test(
        "bad top-level keys are named",
        arguments: [
            (#""healthChecks": {"intervalSeconds": 0}"#, "healthChecks.intervalSeconds", "from 0.1"),
            (#""healthChecks": {"timeoutMs": 50}"#, "healthChecks.timeoutMs", "from 100"),
            (#""healthChecks": {"downAfter": 0}"#, "healthChecks.downAfter", "from 1"),
            (#""healthChecks": {"every": 1}"#, "healthChecks.every", "unknown key"),
            (#""geoip": {}"#, "geoip.database", "is required"),
            (#""bots": {"userAgents": ["x"]}"#, "bots.userAgents[0]", "3 to 200"),
            (#""signing": {"secret": "inline"}"#, "signing.secretFile", "is required"),
            (#""proxies": {"countryHeader": "CF-IPCountry"}"#, "proxies.countryHeader", "trusted proxies"),
            (#""proxies": {"trusted": ["10.0.0.0/8"], "countryHeader": "CF IPCountry"}"#, "proxies.countryHeader", "header name"),
        ])
    func badTopLevelKeys(member: String, key: String, rule: String) {
        expectProblem(C.config(extra: member), key: key, rule: rule)
    }
}
