import Foundation
import Testing

@testable import LinkOutCore

@Suite("ConfigLoader")
struct ConfigLoaderTests: ConfigChecking {
    static let app = #"{"bundleId":"com.example","appAppleId":1234567890}"#
    static let destination = #"{"url":"https://checkout.example.com/nl"}"#

    static func link(
        id: String = #""nl""#, path: String = #""/nl""#, country: String = #""nl""#,
        destinations: String = "[\(destination)]", extra: String = ""
    ) -> String {
        var members = [#""id":\#(id)"#, #""path":\#(path)"#, #""country":\#(country)"#, #""destinations":\#(destinations)"#]
        if !extra.isEmpty { members.append(extra) }
        return "{" + members.joined(separator: ",") + "}"
    }

    static func config(apps: String = "[\(app)]", links: String = "[\(link())]", extra: String = "") -> String {
        var members = [#""apps":\#(apps)"#, #""links":\#(links)"#]
        if !extra.isEmpty { members.insert(extra, at: 0) }
        return "{" + members.joined(separator: ",") + "}"
    }

    static func destinationLink(_ url: String, weight: String? = nil) -> String {
        let entry = weight.map { #"{"url":\#(JSONText.quote(url)),"weight":\#($0)}"# } ?? #"{"url":\#(JSONText.quote(url))}"#
        return config(links: "[\(link(destinations: "[\(entry)]"))]")
    }

    // MARK: The shipped config

    static var shippedConfigPath: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // LinkOutCoreTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // package root
            .appendingPathComponent("config/linkout.json").path
    }

    // MARK: Notifications

    static let reporting = #""reporting":{"keyFile":"key.p8","keyId":"ABCDEFGHIJ","issuerId":"12345678-1234-1234-1234-123456789012"}"#

    @Test("notifications: the path, the body limit and the roots, resolved against the config's folder")
    func notifications() throws {
        let json = Self.config(
            extra: Self.reporting
                + #","notifications":{"path":"/apple/notifications","maxBodyBytes":4096,"rootCertificates":["roots/test.pem"]}"#)
        let config = try load(json).get()
        #expect(config.notifications?.path == "/apple/notifications")
        #expect(config.notifications?.maxBodyBytes == 4096)
        #expect(config.notifications?.rootCertificateFiles == ["/etc/linkout/roots/test.pem"])
        // No roots named: Apple Root CA - G3, built in.
        let plain = try load(Self.config(extra: Self.reporting + #","notifications":{"path":"/apple/notifications"}"#)).get()
        #expect(plain.notifications?.maxBodyBytes == 65_536)
        #expect(plain.notifications?.trustedRootsPEM == [AppleRootCA.g3PEM])
        // Abuse controls: a rate per client and a body deadline by default, both settable.
        #expect(plain.notifications?.rateLimit == RateLimiter.Policy(ratePerSecond: 20, burst: 100))
        #expect(plain.notifications?.bodyTimeoutSeconds == 5)
        #expect(plain.notifications?.maxQueued == 64)
        #expect(plain.notifications?.verificationsPerSecond == 100)
        #expect(plain.notifications?.newChainsPerSecond == 2)
        let tuned = try load(
            Self.config(
                extra: Self.reporting
                    + #","notifications":{"path":"/n","rateLimit":{"requestsPerSecond":2},"bodyTimeoutSeconds":30}"#)
        ).get()
        #expect(tuned.notifications?.rateLimit == RateLimiter.Policy(ratePerSecond: 2, burst: 4))
        #expect(tuned.notifications?.bodyTimeoutSeconds == 30)
    }

    @Test("notifications: each rule names its key")
    func notificationProblems() {
        func with(_ section: String, reporting: Bool = true) -> String {
            Self.config(extra: (reporting ? Self.reporting + "," : "") + #""notifications":\#(section)"#)
        }
        expectProblem(with("{}"), key: "notifications.path", rule: "required")
        expectProblem(with(#"{"path":"apple"}"#), key: "notifications.path", rule: "must be a path")
        expectProblem(with(#"{"path":"/a?b"}"#), key: "notifications.path", rule: "must be a path")
        expectProblem(with(#"{"path":"/healthz"}"#), key: "notifications.path", rule: "must not be a link's path")
        expectProblem(with(#"{"path":"/x","maxBodyBytes":10}"#), key: "notifications.maxBodyBytes", rule: "from 1024 to 1048576")
        expectProblem(with(#"{"path":"/x","rootCertificates":[]}"#), key: "notifications.rootCertificates", rule: "at least one")
        expectProblem(with(#"{"path":"/x","rootCertificates":[1]}"#), key: "notifications.rootCertificates", rule: "PEM file paths")
        expectProblem(with(#"{"path":"/x"}"#, reporting: false), key: "notifications.path", rule: "need the reporting section")
        expectProblem(with(#"{"path":"/x","extra":1}"#), key: "notifications.extra", rule: "unknown key")
        expectProblem(
            with(#"{"path":"/x","rateLimit":{"requestsPerSecond":0}}"#), key: "notifications.rateLimit.requestsPerSecond",
            rule: "more than 0")
        expectProblem(with(#"{"path":"/x","rateLimit":{"burst":3}}"#), key: "notifications.rateLimit.requestsPerSecond", rule: "required")
        expectProblem(
            with(#"{"path":"/x","rateLimit":{"requestsPerSecond":1,"per":"minute"}}"#), key: "notifications.rateLimit.per",
            rule: "unknown key")
        expectProblem(with(#"{"path":"/x","bodyTimeoutSeconds":0}"#), key: "notifications.bodyTimeoutSeconds", rule: "from 1 to 60")
        expectProblem(with(#"{"path":"/x","maxQueued":0}"#), key: "notifications.maxQueued", rule: "from 1 to 10000")
        expectProblem(with(#"{"path":"/x","verificationsPerSecond":0}"#), key: "notifications.verificationsPerSecond", rule: "from 0.1")
        expectProblem(with(#"{"path":"/x","newChainsPerSecond":"2"}"#), key: "notifications.newChainsPerSecond", rule: "must be a number")
    }

    @Test("the shipped config/linkout.json loads")
    func shippedConfig() throws {
        let path = Self.shippedConfigPath
        let data = try #require(FileManager.default.contents(atPath: path), "cannot read \(path)")
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let result = ConfigLoader.load(json: Array(data), baseDirectory: folder)
        if case .failure(let error) = result { Issue.record("shipped config refused:\n\(error)") }
        let config = try result.get()

        #expect(config.apps.contains(AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890)))
        let byPath = Dictionary(config.links.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        for (path, country) in [("/nl", "nl"), ("/de", "de"), ("/fr", "fr")] {
            let link = try #require(byPath[path], "no link \(path)")
            #expect(link.country == country)
            #expect(!link.destinations.isEmpty)
            for destination in link.destinations {
                #expect(DestinationURLRules.problem(with: destination.url) == nil)
                #expect(destination.weight > 0)
            }
        }
        #expect(config.links.contains { $0.destinations.count == 2 }, "some link should split between two destinations")
        #expect(Set(config.links.map(\.id)).count == config.links.count)
        #expect(Set(config.links.map(\.path)).count == config.links.count)
        // Relative paths are taken from the config's folder.
        if let store = config.storePath { #expect(store.hasPrefix(folder + "/")) }
        if let pages = config.publicDirectory { #expect(pages.hasPrefix(folder + "/")) }
        // A gateway can be built from it.
        _ = Gateway(config: config)
    }

    // MARK: A minimal valid config

    @Test("a minimal config loads with defaults")
    func minimal() throws {
        let config = try load(Self.config()).get()
        #expect(config.apps == [AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890)])
        #expect(
            config.links == [
                Link(
                    id: "nl", path: "/nl", country: "nl",
                    destinations: [Destination(url: "https://checkout.example.com/nl", weight: 1)])
            ])
        #expect(config.links[0].onInvalidToken == .reject)
        #expect(config.links[0].forwardToken == false)
        #expect(config.tokens == TokenPolicy.defaults)
        #expect(config.server == ServerSettings())
        #expect(config.storePath == nil)
        #expect(config.publicDirectory == nil)
    }

    @Test("every setting is read")
    func fullConfig() throws {
        let json = """
            {
              "server": {"listen": "[::1]:9090", "threads": 4, "drainGraceSeconds": 2.5, "idleTimeoutSeconds": 60, "maxPendingRecords": 100},
              "store": "data/x.sqlite",
              "publicDir": "/srv/pages",
              "tokens": {"maxLength": 2048, "maxFutureSkewSeconds": 1.5, "staleAfterSeconds": 60},
              "apps": [{"bundleId": "com.example", "appAppleId": 1234567890}, {"bundleId": "com.Other-App", "appAppleId": 42}],
              "links": [
                {"id": "nl", "path": "/nl", "country": "nl",
                 "destinations": [{"url": "https://a.example/nl", "weight": 3}, {"url": "https://b.example/nl", "weight": 0.5}],
                 "onInvalidToken": "redirect", "forwardToken": true},
                {"id": "us_plain-1", "path": "/us/Plain.v1~x", "country": "us", "destinations": [{"url": "https://a.example:8443/us?x=1#top"}], "onInvalidToken": "reject", "forwardToken": false}
              ]
            }
            """
        let config = try load(json, base: "/etc/linkout/").get()
        #expect(
            config.server
                == ServerSettings(
                    listen: ListenAddress(host: "::1", port: 9090), threads: 4,
                    drainGraceSeconds: 2.5, maxPendingRecords: 100, idleTimeoutSeconds: 60))
        #expect(config.storePath == "/etc/linkout/data/x.sqlite")
        #expect(config.publicDirectory == "/srv/pages")
        #expect(config.tokens == TokenPolicy(maxLength: 2048, maxFutureSkewMs: 1500, staleAfterMs: 60_000))
        #expect(config.apps.map(\.bundleId) == ["com.example", "com.Other-App"])
        #expect(config.links.count == 2)
        #expect(
            config.links[0]
                == Link(
                    id: "nl", path: "/nl", country: "nl",
                    destinations: [
                        Destination(url: "https://a.example/nl", weight: 3),
                        Destination(url: "https://b.example/nl", weight: 0.5),
                    ],
                    onInvalidToken: .redirect, forwardToken: true))
        #expect(config.links[1].path == "/us/Plain.v1~x")
        #expect(config.links[1].destinations == [Destination(url: "https://a.example:8443/us?x=1#top")])
    }

    @Test("relative paths resolve against the config's folder")
    func resolve() {
        #expect(ConfigLoader.resolve("data/x", against: "/etc/linkout") == "/etc/linkout/data/x")
        #expect(ConfigLoader.resolve("data/x", against: "/etc/linkout/") == "/etc/linkout/data/x")
        #expect(ConfigLoader.resolve("../data/x", against: "/etc/linkout") == "/etc/linkout/../data/x")
        #expect(ConfigLoader.resolve("/abs/x", against: "/etc/linkout") == "/abs/x")
        #expect(ConfigLoader.resolve("data/x", against: "") == "data/x")
    }

    // MARK: Invalid JSON

    @Test("invalid JSON is reported with its line number")
    func invalidJSON() {
        let json = "{\n  \"apps\": [],\n  \"links\": [ oops ]\n}"
        let found = problems(json)
        #expect(found.count == 1)
        #expect(found.first?.key == "")
        #expect(found.first?.rule.contains("line 3") == true, "\(found)")
        #expect(found.first?.rule.contains("invalid JSON") == true)

        let trailing = problems("{\"apps\": [], \"links\": []}\n\n}")
        #expect(trailing.first?.rule.contains("line 3") == true, "\(trailing)")
        #expect(problems("").first?.rule.contains("line 1") == true)
        #expect(problems("{\"a\":1,}").first?.rule.contains("invalid JSON at line 1") == true)
    }

    @Test("a document that is not an object is refused")
    func notAnObject() {
        expectProblem("[]", key: "", rule: "must be an object, not an array")
        expectProblem("\"x\"", key: "", rule: "must be an object, not a string")
    }

    // MARK: Countries

    @Test("an unknown country code is refused", arguments: ["xx", "uk", "eu", "nld", "n", "", "n1"])
    func unknownCountry(_ code: String) {
        expectProblem(
            Self.config(links: "[\(Self.link(country: JSONText.quote(code)))]"),
            key: "links[0].country", rule: "unknown country code '\(code)'")
    }

    @Test("an uppercase country code is refused", arguments: ["NL", "Nl", "nL", "DE"])
    func uppercaseCountry(_ code: String) {
        expectProblem(
            Self.config(links: "[\(Self.link(country: JSONText.quote(code)))]"),
            key: "links[0].country", rule: "lowercase ISO 3166-1 alpha-2")
    }

    @Test("any ISO country is allowed, also outside Apple's storefront list")
    func countryOutsideStorefronts() throws {
        let config = try load(Self.config(links: "[\(Self.link(country: #""us""#))]")).get()
        #expect(config.links[0].country == "us")
    }

    // MARK: Destinations

    @Test(
        "a destination that is not absolute https is refused",
        arguments: [
            "http://checkout.example.com/nl", "HTTPS://checkout.example.com/nl", "ftp://x.example/", "/nl", "nl",
            "checkout.example.com/nl", "//checkout.example.com/nl", "https:/checkout.example.com", "javascript:alert(1)", "",
        ])
    func notHTTPS(_ url: String) {
        expectProblem(Self.destinationLink(url), key: "links[0].destinations[0].url", rule: "must be an absolute https:// URL")
    }

    @Test(
        "a destination with user information is refused",
        arguments: [
            "https://user@evil.example/", "https://user:pass@checkout.example.com/nl", "https://checkout.example.com@evil.example/",
            "https://@checkout.example.com/",
        ])
    func userInfo(_ url: String) {
        expectProblem(Self.destinationLink(url), key: "links[0].destinations[0].url", rule: "user information")
    }

    @Test(
        "a destination with spaces, control bytes, backslashes or non-ASCII is refused",
        arguments: [
            "https://checkout.example.com/n l", "https://checkout.example.com/nl\r", "https://checkout.example.com/nl\n",
            "https://checkout.example.com/nl\r\nSet-Cookie: a=b", "https://checkout.example.com\\@evil.example/",
            "https://checkout.example.com/\\nl", "https://checkout.example.com/nl\t", "https://checkout.example.com/caf\u{00E9}",
            "https://checkout.example.com/\u{7F}", "https://checkout.example.com/nl\u{0}",
        ])
    func unprintable(_ url: String) {
        expectProblem(Self.destinationLink(url), key: "links[0].destinations[0].url", rule: "printable ASCII")
    }

    @Test(
        "a destination needs a valid host",
        arguments: [
            "https://", "https:///nl", "https://?x", "https://#x",
        ])
    func noHost(_ url: String) {
        expectProblem(Self.destinationLink(url), key: "links[0].destinations[0].url", rule: "must name a host")
    }

    @Test(
        "a destination's host and port must be valid",
        arguments: [
            "https://-bad.example/", "https://.bad.example/", "https://bad..example/", "https://bad_host.example/",
            "https://bad.example:0/", "https://bad.example:65536/", "https://bad.example:/", "https://bad.example:http/",
            "https://[::1/", "https://[]/", "https://[zz::1]/", "https://bad%2Eexample/", "https://bad.example:80:80/",
        ])
    func badHost(_ url: String) {
        expectProblem(Self.destinationLink(url), key: "links[0].destinations[0].url", rule: "must have a valid host name")
    }

    @Test("a port must be written as plain digits", arguments: ["https://bad.example:+443/", "https://bad.example:+1/x"])
    func signedPort(_ url: String) {
        // Int("+443") parses, but browsers refuse a signed port: the rule checks for digits itself.
        expectProblem(Self.destinationLink(url), key: "links[0].destinations[0].url", rule: "must have a valid host name")
    }

    @Test(
        "valid destinations",
        arguments: [
            "https://checkout.example.com", "https://checkout.example.com/", "https://checkout.example.com/nl?plan=annual",
            "https://checkout.example.com/nl#top", "https://checkout.example.com:8443/nl", "https://[::1]:8443/nl",
            "https://[2001:db8::1]/", "https://127.0.0.1/x", "https://checkout.example.com/a/@b", "https://x.example/?",
            "https://x.example/%41~!$&'()*+,;=:",
        ])
    func validDestinations(_ url: String) {
        #expect(DestinationURLRules.problem(with: url) == nil)
        #expect(problems(Self.destinationLink(url)) == [])
    }

    @Test("a destination with two fragments is refused")
    func twoFragments() {
        expectProblem(Self.destinationLink("https://x.example/a#b#c"), key: "links[0].destinations[0].url", rule: "more than one '#'")
    }

    @Test("a destination longer than 2000 bytes is refused")
    func longDestination() {
        let url = "https://x.example/" + String(repeating: "a", count: 2000)
        expectProblem(Self.destinationLink(url), key: "links[0].destinations[0].url", rule: "at most 2000 bytes")
    }

    @Test("the same destination twice in one link is refused")
    func duplicateDestination() {
        let json = Self.config(links: "[\(Self.link(destinations: "[\(Self.destination),\(Self.destination)]"))]")
        expectProblem(json, key: "links[0].destinations[1].url", rule: "duplicate destination")
    }

    @Test("a weight of zero, below zero or not a number is refused", arguments: ["0", "-1", "-0.5", "0.0", "-0"])
    func badWeight(_ weight: String) {
        expectProblem(
            Self.destinationLink("https://x.example/", weight: weight),
            key: "links[0].destinations[0].weight", rule: "must be a number greater than 0")
    }

    @Test("a weight of the wrong type is refused")
    func weightType() {
        expectProblem(
            Self.destinationLink("https://x.example/", weight: "\"3\""),
            key: "links[0].destinations[0].weight", rule: "must be a number, not a string")
        expectProblem(
            Self.destinationLink("https://x.example/", weight: "true"),
            key: "links[0].destinations[0].weight", rule: "must be a number, not a boolean")
        expectProblem(
            Self.destinationLink("https://x.example/", weight: "null"),
            key: "links[0].destinations[0].weight", rule: "must be a number, not null")
    }

    @Test("an empty destination list is refused")
    func noDestinations() {
        expectProblem(
            Self.config(links: "[\(Self.link(destinations: "[]"))]"), key: "links[0].destinations", rule: "at least one destination")
    }

    @Test("a destination that is not an object is refused")
    func destinationNotObject() {
        expectProblem(
            Self.config(links: "[\(Self.link(destinations: #"["https://x.example/"]"#))]"),
            key: "links[0].destinations[0]", rule: "must be an object, not a string")
    }

    // MARK: Paths

    @Test("a path with a query is refused", arguments: ["/nl?x=1", "/nl?", "/?"])
    func pathWithQuery(_ path: String) {
        expectProblem(
            Self.config(links: "[\(Self.link(path: JSONText.quote(path)))]"), key: "links[0].path", rule: "must not contain a query")
    }

    @Test("a path must start with '/'", arguments: ["nl", "", "https://x.example/nl", " /nl", "*"])
    func pathWithoutSlash(_ path: String) {
        expectProblem(Self.config(links: "[\(Self.link(path: JSONText.quote(path)))]"), key: "links[0].path", rule: "must start with '/'")
    }

    @Test(
        "other path rules",
        arguments: [
            ("/nl#x", "fragment"), ("//nl", "'//'"), ("/nl//x", "'//'"), ("/nl/../de", "'..'"), ("/./nl", "'.'"),
            ("/nl/..", "'..'"), ("/n l", "only letters"), ("/nl%20", "only letters"), ("/caf\u{00E9}", "only letters"),
            ("/nl\\x", "only letters"), ("/nl\r\n", "only letters"), ("/nl;x", "only letters"), ("/nl:x", "only letters"),
            ("/" + String(repeating: "a", count: 900), "at most 900 bytes"),
        ])
    func pathRules(_ path: String, _ rule: String) {
        expectProblem(Self.config(links: "[\(Self.link(path: JSONText.quote(path)))]"), key: "links[0].path", rule: rule)
    }

    @Test("paths the gateway answers itself are refused", arguments: ["/healthz", "/readyz", "/favicon.ico", "/robots.txt"])
    func reservedPath(_ path: String) {
        expectProblem(Self.config(links: "[\(Self.link(path: JSONText.quote(path)))]"), key: "links[0].path", rule: "reserved")
    }

    @Test("valid paths", arguments: ["/", "/nl", "/de/annual", "/fr/b", "/NL", "/a-b_c.d~e/F9", "/nl/", "/healthz/x", "/readyz2"])
    func validPaths(_ path: String) {
        #expect(LinkPathRules.problem(with: path) == nil)
    }

    @Test("a duplicate path is refused")
    func duplicatePath() {
        let json = Self.config(links: "[\(Self.link()),\(Self.link(id: #""nl2""#))]")
        expectProblem(json, key: "links[1].path", rule: "duplicate path '/nl'")
    }

    @Test("a duplicate link id is refused")
    func duplicateId() {
        let json = Self.config(links: "[\(Self.link()),\(Self.link(path: #""/nl2""#))]")
        expectProblem(json, key: "links[1].id", rule: "duplicate link id 'nl'")
    }

    @Test(
        "a link id must be short lowercase letters, digits, '-' or '_'",
        arguments: ["", "NL", "n l", "nl/x", "nl.x", String(repeating: "a", count: 65)])
    func badLinkId(_ id: String) {
        expectProblem(Self.config(links: "[\(Self.link(id: JSONText.quote(id)))]"), key: "links[0].id", rule: "1 to 64 lowercase")
    }

    @Test("onInvalidToken must be reject or redirect")
    func badAction() {
        expectProblem(
            Self.config(links: "[\(Self.link(extra: #""onInvalidToken":"ignore""#))]"),
            key: "links[0].onInvalidToken", rule: "must be 'reject' or 'redirect'")
        expectProblem(
            Self.config(links: "[\(Self.link(extra: #""forwardToken":"yes""#))]"),
            key: "links[0].forwardToken", rule: "must be true or false, not a string")
    }

    // MARK: Apps

    @Test("bundle IDs are checked")
    func badBundleId() {
        expectProblem(
            Self.config(apps: #"[{"bundleId":"com example","appAppleId":1}]"#), key: "apps[0].bundleId", rule: "must be a bundle ID")
        expectProblem(Self.config(apps: #"[{"bundleId":"","appAppleId":1}]"#), key: "apps[0].bundleId", rule: "must be a bundle ID")
        expectProblem(Self.config(apps: "[\(Self.app),\(Self.app)]"), key: "apps[1].bundleId", rule: "duplicate bundle ID 'com.example'")
        expectProblem(
            Self.config(apps: #"[{"bundleId":"com.example","appAppleId":0}]"#), key: "apps[0].appAppleId",
            rule: "must be a positive integer")
        expectProblem(
            Self.config(apps: #"[{"bundleId":"com.example","appAppleId":-5}]"#), key: "apps[0].appAppleId",
            rule: "must be a positive integer")
        expectProblem(Self.config(apps: "[]"), key: "apps", rule: "at least one app")
        expectProblem(Self.config(links: "[]"), key: "links", rule: "at least one link")
    }

    // MARK: Missing keys

    @Test(
        "each required key is reported when missing",
        arguments: [
            (#"{"links":[{"id":"nl","path":"/nl","country":"nl","destinations":[{"url":"https://x.example/"}]}]}"#, "apps"),
            (#"{"apps":[{"bundleId":"com.example","appAppleId":1}]}"#, "links"),
            (
                #"{"apps":[{"appAppleId":1}],"links":[{"id":"nl","path":"/nl","country":"nl","destinations":[{"url":"https://x.example/"}]}]}"#,
                "apps[0].bundleId"
            ),
            (
                #"{"apps":[{"bundleId":"com.example"}],"links":[{"id":"nl","path":"/nl","country":"nl","destinations":[{"url":"https://x.example/"}]}]}"#,
                "apps[0].appAppleId"
            ),
            (
                #"{"apps":[{"bundleId":"com.example","appAppleId":1}],"links":[{"path":"/nl","country":"nl","destinations":[{"url":"https://x.example/"}]}]}"#,
                "links[0].id"
            ),
            (
                #"{"apps":[{"bundleId":"com.example","appAppleId":1}],"links":[{"id":"nl","country":"nl","destinations":[{"url":"https://x.example/"}]}]}"#,
                "links[0].path"
            ),
            (
                #"{"apps":[{"bundleId":"com.example","appAppleId":1}],"links":[{"id":"nl","path":"/nl","destinations":[{"url":"https://x.example/"}]}]}"#,
                "links[0].country"
            ),
            (
                #"{"apps":[{"bundleId":"com.example","appAppleId":1}],"links":[{"id":"nl","path":"/nl","country":"nl"}]}"#,
                "links[0].destinations"
            ),
            (
                #"{"apps":[{"bundleId":"com.example","appAppleId":1}],"links":[{"id":"nl","path":"/nl","country":"nl","destinations":[{"weight":2}]}]}"#,
                "links[0].destinations[0].url"
            ),
        ])
    func missingKey(_ json: String, _ key: String) {
        expectProblem(json, key: key, rule: "is required")
        #expect(problems(json).count == 1, "\(problems(json))")
    }

    @Test("an empty object reports both top-level lists")
    func emptyObject() {
        let found = problems("{}")
        #expect(found.contains(ConfigProblem(key: "apps", rule: "is required")))
        #expect(found.contains(ConfigProblem(key: "links", rule: "is required")))
    }

    // MARK: Wrong types

    @Test(
        "a value of the wrong type names the key and the expected type",
        arguments: [
            (Self.config(apps: "{}"), "apps", "must be an array, not an object"),
            (Self.config(links: #""/nl""#), "links", "must be an array, not a string"),
            (Self.config(apps: "[1]"), "apps[0]", "must be an object, not a number"),
            (Self.config(links: "[null]"), "links[0]", "must be an object, not null"),
            (Self.config(apps: #"[{"bundleId":1,"appAppleId":1}]"#), "apps[0].bundleId", "must be a string, not a number"),
            (
                Self.config(apps: #"[{"bundleId":"com.example","appAppleId":"1234567890"}]"#), "apps[0].appAppleId",
                "must be a whole number, not a string"
            ),
            (
                Self.config(apps: #"[{"bundleId":"com.example","appAppleId":12.5}]"#), "apps[0].appAppleId",
                "must be a whole number, not a number"
            ),
            (Self.config(links: "[\(Self.link(id: "1"))]"), "links[0].id", "must be a string, not a number"),
            (Self.config(links: "[\(Self.link(path: "[\"/nl\"]"))]"), "links[0].path", "must be a string, not an array"),
            (Self.config(links: "[\(Self.link(country: "true"))]"), "links[0].country", "must be a string, not a boolean"),
            (
                Self.config(links: "[\(Self.link(destinations: #"{"url":"https://x.example/"}"#))]"), "links[0].destinations",
                "must be an array, not an object"
            ),
            (
                Self.config(links: "[\(Self.link(destinations: #"[{"url":5}]"#))]"), "links[0].destinations[0].url",
                "must be a string, not a number"
            ),
            (Self.config(extra: #""server":[]"#), "server", "must be an object, not an array"),
            (Self.config(extra: #""server":{"threads":"4"}"#), "server.threads", "must be a whole number, not a string"),
            (Self.config(extra: #""server":{"threads":1.5}"#), "server.threads", "must be a whole number"),
            (Self.config(extra: #""server":{"listen":8080}"#), "server.listen", "must be a string, not a number"),
            (Self.config(extra: #""tokens":{"maxLength":"4096"}"#), "tokens.maxLength", "must be a whole number, not a string"),
            (Self.config(extra: #""tokens":"none""#), "tokens", "must be an object, not a string"),
            (Self.config(extra: #""store":false"#), "store", "must be a string, not a boolean"),
            (Self.config(extra: #""publicDir":{}"#), "publicDir", "must be a string, not an object"),
        ])
    func wrongType(_ json: String, _ key: String, _ rule: String) {
        expectProblem(json, key: key, rule: rule)
    }

    // MARK: Ranges

    @Test(
        "numeric settings out of range are refused",
        arguments: [
            (#""server":{"threads":257}"#, "server.threads"), (#""server":{"threads":-1}"#, "server.threads"),
            (#""server":{"drainGraceSeconds":-1}"#, "server.drainGraceSeconds"),
            (#""server":{"drainGraceSeconds":3601}"#, "server.drainGraceSeconds"),
            (#""server":{"maxPendingRecords":0}"#, "server.maxPendingRecords"),
            (#""server":{"idleTimeoutSeconds":0}"#, "server.idleTimeoutSeconds"),
            (#""tokens":{"maxLength":63}"#, "tokens.maxLength"), (#""tokens":{"maxLength":65537}"#, "tokens.maxLength"),
            (#""tokens":{"maxFutureSkewSeconds":-1}"#, "tokens.maxFutureSkewSeconds"),
            (#""tokens":{"maxFutureSkewSeconds":86401}"#, "tokens.maxFutureSkewSeconds"),
            (#""tokens":{"staleAfterSeconds":0}"#, "tokens.staleAfterSeconds"),
            (#""tokens":{"staleAfterSeconds":31622401}"#, "tokens.staleAfterSeconds"),
            (#""store":"""#, "store"), (#""publicDir":"""#, "publicDir"),
        ])
    func outOfRange(_ extra: String, _ key: String) {
        let found = problems(Self.config(extra: extra))
        #expect(found.count == 1 && found.first?.key == key, "\(found)")
    }

    // MARK: Unknown keys

    @Test(
        "a misspelt key is reported as unknown, wherever it is",
        arguments: [
            (Self.config(extra: #""lnks":[]"#), "lnks"),
            (Self.config(extra: #""server":{"listn":"127.0.0.1:1"}"#), "server.listn"),
            (Self.config(extra: #""tokens":{"maxLenght":100}"#), "tokens.maxLenght"),
            (Self.config(apps: #"[{"bundleId":"com.example","appAppleId":1,"appleId":1}]"#), "apps[0].appleId"),
            (Self.config(links: "[\(Self.link(extra: #""onInvalidTokens":"redirect""#))]"), "links[0].onInvalidTokens"),
            (Self.config(links: "[\(Self.link(extra: #""forwardtoken":true"#))]"), "links[0].forwardtoken"),
            (
                Self.config(links: "[\(Self.link(destinations: #"[{"url":"https://x.example/","wieght":2}]"#))]"),
                "links[0].destinations[0].wieght"
            ),
        ])
    func unknownKey(_ json: String, _ key: String) {
        expectProblem(json, key: key, rule: "unknown key")
    }

    @Test("a misspelt required key reports both the unknown key and the missing one")
    func misspeltRequiredKey() {
        let json = Self.config(links: #"[{"id":"nl","path":"/nl","country":"nl","destinatons":[{"url":"https://x.example/"}]}]"#)
        expectProblem(json, key: "links[0].destinatons", rule: "unknown key")
        expectProblem(json, key: "links[0].destinations", rule: "is required")
    }

    @Test("a key given twice is refused")
    func duplicateKey() {
        expectProblem(
            #"{"apps":[],"apps":[{"bundleId":"com.example","appAppleId":1}],"links":[]}"#, key: "apps", rule: "given more than once")
        expectProblem(
            Self.config(links: #"[{"id":"nl","id":"de","path":"/nl","country":"nl","destinations":[{"url":"https://x.example/"}]}]"#),
            key: "links[0].id", rule: "given more than once")
    }

    // MARK: Listen address

    @Test(
        "a bad listen address is refused",
        arguments: [
            "localhost", "127.0.0.1", ":8080", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:http",
            "::1:8080", "[::1]", "[]:8080", "", "[::1:8080",
        ])
    func badListen(_ text: String) {
        expectProblem(Self.config(extra: #""server":{"listen":\#(JSONText.quote(text))}"#), key: "server.listen", rule: "must be HOST:PORT")
        #expect(ListenAddress.parse(text) == nil)
    }

    @Test(
        "valid listen addresses",
        arguments: [
            ("127.0.0.1:8080", "127.0.0.1", 8080), ("0.0.0.0:0", "0.0.0.0", 0), ("[::1]:8080", "::1", 8080),
            ("[::]:443", "::", 443), ("localhost:65535", "localhost", 65535),
        ])
    func validListen(_ text: String, _ host: String, _ port: Int) {
        #expect(ListenAddress.parse(text) == ListenAddress(host: host, port: port))
        #expect(ListenAddress.parse(text)?.description == text)
    }

    // MARK: Several problems

    @Test("every problem is reported, not only the first")
    func severalProblems() {
        let json = """
            {
              "server": {"listen": "nowhere", "threads": 999},
              "apps": [{"bundleId": "com example", "appAppleId": 0}],
              "links": [
                {"id": "nl", "path": "nl", "country": "NL", "destinations": [{"url": "http://x.example/", "weight": 0}]},
                {"id": "nl", "path": "/healthz", "country": "xx", "destinations": [{"url": "https://u@x.example/"}], "extra": 1}
              ],
              "typo": true
            }
            """
        let found = problems(json)
        let expected: [(String, String)] = [
            ("server.listen", "HOST:PORT"), ("server.threads", "from 0"),
            ("apps[0].bundleId", "bundle ID"), ("apps[0].appAppleId", "positive"),
            ("links[0].path", "start with '/'"), ("links[0].country", "unknown country code 'NL'"),
            ("links[0].destinations[0].url", "https://"), ("links[0].destinations[0].weight", "greater than 0"),
            ("links[1].id", "duplicate link id 'nl'"), ("links[1].path", "reserved"), ("links[1].country", "'xx'"),
            ("links[1].destinations[0].url", "user information"), ("links[1].extra", "unknown key"), ("typo", "unknown key"),
        ]
        for (key, rule) in expected {
            #expect(found.contains { $0.key == key && $0.rule.contains(rule) }, "missing \(key): \(rule) in \(found)")
        }
        #expect(found.count == expected.count, "\(found)")
    }

    @Test("a problem's description is 'key: rule'; an error lists them one per line")
    func descriptions() {
        #expect(ConfigProblem(key: "links[0].path", rule: "must start with '/'").description == "links[0].path: must start with '/'")
        #expect(ConfigProblem(key: "", rule: "invalid JSON at line 2: x").description == "invalid JSON at line 2: x")
        let error = ConfigError(problems: [ConfigProblem(key: "a", rule: "b"), ConfigProblem(key: "c", rule: "d")])
        #expect(error.description == "a: b\nc: d")
    }
}
