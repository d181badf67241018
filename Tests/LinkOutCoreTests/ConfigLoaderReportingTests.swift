import Testing

@testable import LinkOutCore

/// The config's `reporting` and `api` sections, in the style of `ConfigLoaderTests`.
@Suite("ConfigLoader reporting and api")
struct ConfigLoaderReportingTests: ConfigChecking {
    typealias C = ConfigLoaderTests
    static let keyId = "2X9R4HXF34"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"

    /// A `reporting` section with the three required keys, plus `extra` members.
    static func reporting(
        _ extra: String = "", keyFile: String = #""keys/AuthKey.p8""#, keyId: String? = nil, issuerId: String? = nil
    ) -> String {
        var members = [
            #""keyFile":\#(keyFile)"#,
            #""keyId":\#(keyId ?? "\"\(Self.keyId)\"")"#,
            #""issuerId":\#(issuerId ?? "\"\(Self.issuerId)\"")"#,
        ]
        if !extra.isEmpty { members.append(extra) }
        return C.config(extra: #""reporting":{"# + members.joined(separator: ",") + "}")
    }

    static func api(_ members: String) -> String {
        C.config(extra: #""api":{\#(members)}"#)
    }

    // MARK: reporting

    @Test("absent sections: nothing reported, no API listener")
    func absent() throws {
        let config = try load(C.config()).get()
        #expect(config.reporting == nil)
        #expect(config.api == nil)
    }

    @Test("reporting's defaults, the key file taken from the config's folder")
    func reportingDefaults() throws {
        let settings = try #require(try load(Self.reporting()).get().reporting)
        #expect(settings.keyFile == "/etc/linkout/keys/AuthKey.p8")
        #expect(settings.keyId == Self.keyId)
        #expect(settings.issuerId == Self.issuerId)
        #expect(settings.noPurchaseAfterHours == 72)
        #expect(settings.gatherSeconds == 30)
        #expect(settings.productionURL == "https://api.storekit.apple.com")
        #expect(settings.sandboxURL == "https://api.storekit-sandbox.apple.com")
        #expect(settings.caFile == nil)
        #expect(settings.timeoutSeconds == 30)
        #expect(settings.retrySeconds == 10)
        #expect(settings.pollSeconds == 5)
        #expect(settings.maxConcurrentRequests == 64)
        #expect(settings.privateKeyPEM == "")
    }

    @Test("every reporting setting is read; absolute paths are kept, relative ones resolved")
    func reportingSettings() throws {
        let json = Self.reporting(
            #""noPurchaseAfterHours":0,"gatherSeconds":3600,"productionURL":"https://apple.test:8443/","sandboxURL":"https://sandbox.test","caFile":"ca.pem","timeoutSeconds":300,"retrySeconds":1,"pollSeconds":0.05,"maxConcurrentRequests":8"#,
            keyFile: #""/secrets/AuthKey.p8""#)
        let settings = try #require(try load(json, base: "/srv/linkout/").get().reporting)
        #expect(settings.keyFile == "/secrets/AuthKey.p8")
        #expect(settings.noPurchaseAfterHours == 0)
        #expect(settings.gatherSeconds == 3600)
        #expect(settings.productionURL == "https://apple.test:8443")
        #expect(settings.sandboxURL == "https://sandbox.test")
        #expect(settings.caFile == "/srv/linkout/ca.pem")
        #expect(settings.timeoutSeconds == 300)
        #expect(settings.retrySeconds == 1)
        #expect(settings.pollSeconds == 0.05)
        #expect(settings.maxConcurrentRequests == 8)
    }

    @Test("keyFile, keyId and issuerId are required")
    func reportingRequired() {
        let found = problems(C.config(extra: #""reporting":{}"#))
        for key in ["keyFile", "keyId", "issuerId"] {
            #expect(found.contains(ConfigProblem(key: "reporting.\(key)", rule: "is required")), "\(key) in \(found)")
        }
        expectProblem(
            Self.reporting(keyFile: #""""#), key: "reporting.keyFile", rule: "must be the path of the In-App Purchase key's .p8 file")
        expectProblem(Self.reporting(keyFile: "7"), key: "reporting.keyFile", rule: "must be a string")
    }

    /// App Store Connect's key IDs are 10 capitals and digits: anything else is a typo every report would
    /// meet as a 401.
    @Test(
        "a keyId that is not 10 capitals and digits is refused",
        arguments: [
            #""""#, #""2X9R4HXF3/""#, #""../AuthKey""#, #""2X9R 4HXF34""#, "\"\(String(repeating: "A", count: 65))\"", #""2X9R4HXF3""#,
            #""2X9R4HXF345""#, #""2x9r4hxf34""#,
        ])
    func badKeyId(_ value: String) {
        expectProblem(
            Self.reporting(keyId: value), key: "reporting.keyId", rule: "must be the key's 10-character ID from App Store Connect")
    }

    @Test(
        "an issuerId that is not a UUID is refused",
        arguments: [
            #""""#, #""57246542-96fe-1a63-e053-0824d011072""#, #""57246542x96fe-1a63-e053-0824d011072a""#,
            #""57246542-96fe-1a63-e053-0824d011072g""#,
        ])
    func badIssuerId(_ value: String) {
        expectProblem(
            Self.reporting(issuerId: value), key: "reporting.issuerId", rule: "must be the issuer ID from App Store Connect (a UUID)")
    }

    @Test(
        "Apple's URLs must be https with a host and nothing after it",
        arguments: [
            "http://api.storekit.apple.com", "https://api.storekit.apple.com/externalPurchase", "https://", "https://a.test?x=1",
            "https://a.test#x", "https://user@a.test", "api.storekit.apple.com",
        ])
    func badURL(_ url: String) {
        for key in ["productionURL", "sandboxURL"] {
            expectProblem(
                Self.reporting("\"\(key)\":\"\(url)\""), key: "reporting.\(key)",
                rule: "must be an https:// URL with a host and no path, query or fragment")
        }
    }

    @Test(
        "each reporting number is checked against its range",
        arguments: [
            ("noPurchaseAfterHours", "240", "must be from 0 to under 240 (Apple reminds on day 10)"),
            ("noPurchaseAfterHours", "-1", "must be from 0 to under 240"),
            ("gatherSeconds", "-1", "must be from 0 to 3600"),
            ("gatherSeconds", "3601", "must be from 0 to 3600"),
            ("timeoutSeconds", "0", "must be from 1 to 300"),
            ("timeoutSeconds", "301", "must be from 1 to 300"),
            ("timeoutSeconds", "1.5", "must be a whole number"),
            ("retrySeconds", "0.5", "must be from 1 to 3600"),
            ("retrySeconds", "3601", "must be from 1 to 3600"),
            ("pollSeconds", "0.01", "must be from 0.05 to 3600"),
            ("pollSeconds", "3601", "must be from 0.05 to 3600"),
            ("pollSeconds", #""5""#, "must be a number"),
            ("maxConcurrentRequests", "0", "must be from 1 to 256"),
            ("maxConcurrentRequests", "257", "must be from 1 to 256"),
            ("maxConcurrentRequests", "2.5", "must be a whole number"),
            ("caFile", #""""#, "must be a file path"),
        ])
    func reportingRanges(_ key: String, _ value: String, _ rule: String) {
        expectProblem(Self.reporting("\"\(key)\":\(value)"), key: "reporting.\(key)", rule: rule)
    }

    @Test("the edges of each range are accepted")
    func reportingEdges() throws {
        let settings = try #require(
            try load(
                Self.reporting(#""noPurchaseAfterHours":239.9,"gatherSeconds":0,"timeoutSeconds":1,"retrySeconds":3600,"pollSeconds":3600"#)
            ).get().reporting)
        #expect(settings.noPurchaseAfterHours == 239.9)
        #expect(settings.gatherSeconds == 0)
        #expect(settings.timeoutSeconds == 1)
        #expect(settings.retrySeconds == 3600)
        #expect(settings.pollSeconds == 3600)
    }

    @Test("an unknown key in reporting is refused")
    func reportingUnknownKey() {
        expectProblem(Self.reporting(#""retrySecond":5"#), key: "reporting.retrySecond", rule: "unknown key (did you mean retrySeconds?)")
        expectProblem(
            Self.reporting(#""noPurchaseAfterhours":72"#), key: "reporting.noPurchaseAfterhours",
            rule: "unknown key (did you mean noPurchaseAfterHours?)")
        // Nothing near enough: no guess.
        #expect(
            problems(Self.api(#""listen":"127.0.0.1:8081","keysFile":"k","maxBody":10"#)).contains {
                $0.key == "api.maxBody" && $0.rule == "unknown key"
            })
        expectProblem(C.config(extra: #""reporting":true"#), key: "reporting", rule: "must be an object")
    }

    // MARK: api

    @Test("api: listen and keysFile, the default body limit, the keys file resolved")
    func apiDefaults() throws {
        let api = try #require(try load(Self.api(#""listen":"127.0.0.1:8081","keysFile":"api-keys""#)).get().api)
        #expect(api.listen == ListenAddress(host: "127.0.0.1", port: 8081))
        #expect(api.keysFile == "/etc/linkout/api-keys")
        #expect(api.maxBodyBytes == 1_048_576)
        let absolute = try #require(try load(Self.api(#""listen":"127.0.0.1:0","keysFile":"/run/keys","maxBodyBytes":1024"#)).get().api)
        #expect(absolute.keysFile == "/run/keys")
        #expect(absolute.maxBodyBytes == 1024)
        #expect(try load(Self.api(#""listen":"127.0.0.1:0","keysFile":"k","maxBodyBytes":16777216"#)).get().api?.maxBodyBytes == 16_777_216)
        // Per key 50 a second (100 at once), 256 requests queued for the store, unless set.
        #expect(api.rateLimit == RateLimiter.Policy(ratePerSecond: 50, burst: 100))
        #expect(api.maxQueued == 256)
        let tuned = try #require(
            try load(
                Self.api(
                    #""listen":"127.0.0.1:0","keysFile":"k","rateLimit":{"requestsPerSecond":5,"burst":20},"maxQueued":8"#)
            ).get().api)
        #expect(tuned.rateLimit == RateLimiter.Policy(ratePerSecond: 5, burst: 20))
        #expect(tuned.maxQueued == 8)
    }

    @Test("api: rateLimit and maxQueued are checked, even when listen is wrong")
    func apiAbuseControls() {
        for listen in ["127.0.0.1:8081", "nowhere"] {
            expectProblem(
                Self.api(#""listen":"\#(listen)","keysFile":"k","rateLimit":{"requestsPerSecond":-1}"#),
                key: "api.rateLimit.requestsPerSecond", rule: "more than 0")
            expectProblem(
                Self.api(#""listen":"\#(listen)","keysFile":"k","rateLimit":{"requestsPerSecond":1,"burst":0}"#),
                key: "api.rateLimit.burst", rule: "from 1 to 1000000")
            expectProblem(Self.api(#""listen":"\#(listen)","keysFile":"k","maxQueued":1.5"#), key: "api.maxQueued", rule: "whole number")
        }
        expectProblem(Self.api(#""listen":"127.0.0.1:8081","keysFile":"k","maxQueued":0"#), key: "api.maxQueued", rule: "from 1 to 100000")
    }

    @Test("api: listen and keysFile are required and checked")
    func apiRequired() {
        let found = problems(Self.api(""))
        #expect(found.contains(ConfigProblem(key: "api.listen", rule: "is required")), "\(found)")
        #expect(found.contains(ConfigProblem(key: "api.keysFile", rule: "is required")), "\(found)")
        expectProblem(Self.api(#""listen":"8081","keysFile":"k""#), key: "api.listen", rule: "must be HOST:PORT, such as 127.0.0.1:8081")
        expectProblem(Self.api(#""listen":"127.0.0.1:8081","keysFile":"""#), key: "api.keysFile", rule: "must be a file path")
    }

    @Test("api: maxBodyBytes range, checked even when listen is wrong", arguments: ["1023", "16777217", "1.5"])
    func apiBodyLimit(_ value: String) {
        let rule = value == "1.5" ? "must be a whole number" : "must be from 1024 to 16777216"
        expectProblem(Self.api(#""listen":"127.0.0.1:8081","keysFile":"k","maxBodyBytes":\#(value)"#), key: "api.maxBodyBytes", rule: rule)
        if value == "1.5" {
            expectProblem(Self.api(#""listen":"nowhere","keysFile":"k","maxBodyBytes":\#(value)"#), key: "api.maxBodyBytes", rule: rule)
        }
    }

    @Test("an unknown key in api is refused")
    func apiUnknownKey() {
        expectProblem(Self.api(#""listen":"127.0.0.1:8081","keysFile":"k","maxBody":10"#), key: "api.maxBody", rule: "unknown key")
    }
}

/// `paymentProviders` and `links[].parameters.externalPurchaseIdAs`.
@Suite("ConfigLoader payment providers")
struct ConfigLoaderPaymentProviderTests: ConfigChecking {
    typealias C = ConfigLoaderTests
    static func config(_ providers: String, links: String = "[\(C.link())]") -> String {
        C.config(
            links: links,
            extra:
                #""paymentProviders":{\#(providers)},"reporting":{"keyFile":"k.p8","keyId":"2X9R4HXF34","issuerId":"57246542-96fe-1a63-e053-0824d011072a"}"#
        )
    }

    @Test("a secrets file from the config's folder; secrets inline; the defaults")
    func read() throws {
        let config = try load(
            Self.config(
                """
                "stripe":{"path":"/webhooks/stripe","signingSecretsFile":"stripe-secrets","defaultProductIdentifier":"gems"},
                "paddle":{"path":"/webhooks/paddle","signingSecrets":["pdl_ntfset_01abcdefgh_x"],"environment":"sandbox","toleranceSeconds":5}
                """)
        ).get()
        let stripe = try #require(config.paymentProviders[.stripe])
        #expect(
            stripe.secretsFile == "/etc/linkout/stripe-secrets" && stripe.toleranceSeconds == 300
                && stripe.defaultProductIdentifier == "gems")
        let paddle = try #require(config.paymentProviders[.paddle])
        #expect(paddle.secrets == ["pdl_ntfset_01abcdefgh_x"] && paddle.environment == .sandbox && paddle.toleranceSeconds == 5)
    }

    @Test("each problem by its key")
    func problems() {
        expectProblem(
            Self.config(#""stripe":{"path":"/nl","signingSecretsFile":"s"}"#), key: "paymentProviders.stripe.path",
            rule: "must not be a link's path")
        expectProblem(Self.config(#""stripe":{"path":"/w"}"#), key: "paymentProviders.stripe.signingSecretsFile", rule: "is required")
        expectProblem(
            Self.config(#""stripe":{"path":"/w","signingSecrets":["sk_live_123456789"]}"#), key: "paymentProviders.stripe.signingSecrets",
            rule: "not a stripe webhook signing secret")
        expectProblem(
            Self.config(#""paddle":{"path":"/w","signingSecretsFile":"s"}"#), key: "paymentProviders.paddle.environment",
            rule: "is required")
        expectProblem(
            Self.config(#""paddle":{"path":"/w","signingSecretsFile":"s","environment":"live"}"#),
            key: "paymentProviders.paddle.environment", rule: "production or sandbox")
        expectProblem(
            Self.config(
                #""stripe":{"path":"/w","signingSecretsFile":"s"},"paddle":{"path":"/w","signingSecretsFile":"s","environment":"sandbox"}"#),
            key: "paymentProviders.paddle.path", rule: "another provider's")
        expectProblem(Self.config(#""adyen":{}"#), key: "paymentProviders.adyen", rule: "unknown key")
        expectProblem(
            C.config(extra: #""paymentProviders":{"stripe":{"path":"/w","signingSecretsFile":"s"}}"#), key: "paymentProviders.stripe.path",
            rule: "need the reporting section")
    }

    @Test("externalPurchaseIdAs names the id's parameter, which no pass-through may then take")
    func idParameter() throws {
        let link = C.link(extra: #""parameters":{"externalPurchaseIdAs":"client_reference_id"}"#)
        let config = try load(C.config(links: "[\(link)]")).get()
        #expect(config.links[0].parameters.externalPurchaseIdName == "client_reference_id")
        expectProblem(
            C.config(
                links:
                    "[\(C.link(extra: #""parameters":{"externalPurchaseIdAs":"client_reference_id","passThrough":["client_reference_id"]}"#))]"
            ),
            key: "links[0].parameters.passThrough[0]", rule: "linkout's own parameter")
        expectProblem(
            C.config(links: "[\(C.link(extra: #""parameters":{"externalPurchaseIdAs":"link"}"#))]"),
            key: "links[0].parameters.externalPurchaseIdAs", rule: "another of linkout's parameters")
        expectProblem(
            C.config(links: "[\(C.link(extra: #""parameters":{"externalPurchaseIdAs":"a b"}"#))]"),
            key: "links[0].parameters.externalPurchaseIdAs", rule: "must be a query parameter name")
    }
}
