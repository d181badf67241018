import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// Issue 7 against the real binary: shared links' country, visit kinds, checkout parameters, experiments.
@Suite(.serialized)
struct DestinationChoiceTests {
    static let sharedLink = #"""
        [{ "id": "eu", "path": "/eu", "country": "nl",
           "destinations": [{ "url": "https://shop.example/nl" }],
           "countries": { "be": { "destinations": [{ "url": "https://shop.example/be" }] }, "lu": {} },
           "parameters": { "country": true } }]
        """#

    func location(
        _ server: GatewayProcess, _ path: String = "/eu", id: String = UUID().uuidString.lowercased(), headers: [String] = []
    ) throws -> String? {
        let response = try server.get(TokenBuilder.linkOut(path, token: TokenBuilder.minted(id: id)), headers: headers)
        #expect(response.status == 302)
        return response[header: "Location"]
    }

    // MARK: Country

    @Test func countryHeaderCountsOnlyFromATrustedProxy() throws {
        let folder = TemporaryFolder()
        let trusted = folder.write(
            "trusted.json",
            TestConfig.json(
                links: Self.sharedLink,
                extra: #"""
                    "proxies": { "trusted": ["127.0.0.1"], "countryHeader": "CF-IPCountry" },
                    """#))
        let server = try GatewayProcess(config: trusted, store: folder.file("trusted.sqlite"))
        let id = UUID().uuidString.lowercased()
        #expect(
            try location(server, id: id, headers: ["CF-IPCountry: BE"]) == "https://shop.example/be?externalPurchaseId=\(id)&country=be")
        #expect(try location(server, headers: ["CF-IPCountry: LU"])?.hasPrefix("https://shop.example/nl?") == true)
        #expect(try location(server, headers: ["CF-IPCountry: LU"])?.hasSuffix("&country=lu") == true)
        #expect(try location(server, headers: ["CF-IPCountry: XX"])?.hasSuffix("&country=nl") == true, "XX is unknown")
        #expect(try location(server, headers: ["CF-IPCountry: T1"])?.hasSuffix("&country=nl") == true, "T1 (Tor) is unknown")
        #expect(try location(server, headers: ["CF-IPCountry: US"])?.hasSuffix("&country=nl") == true, "not served by this link")
        #expect(try location(server)?.hasSuffix("&country=nl") == true, "no header")
        #expect(server.stop() == 0)
        let exported = try exportTokens(store: server.storePath)
        #expect(exported.first { $0["externalPurchaseId"] as? String == id }?["country"] as? String == "be")

        // The same header from a peer outside the trusted ranges is anyone's to send: ignored.
        let untrusted = folder.write(
            "untrusted.json",
            TestConfig.json(
                links: Self.sharedLink,
                extra: #"""
                    "proxies": { "trusted": ["10.0.0.0/8"], "countryHeader": "CF-IPCountry" },
                    """#))
        let other = try GatewayProcess(config: untrusted, store: folder.file("untrusted.sqlite"))
        #expect(try location(other, headers: ["CF-IPCountry: BE"])?.hasPrefix("https://shop.example/nl?") == true)
        #expect(other.stop() == 0)
    }

    @Test func geoIPDatabaseWhenNoHeaderSays() throws {
        let folder = TemporaryFolder()
        let database = folder.file("country.mmdb")
        try MMDBWriter.write([("127.0.0.0/8", "BE"), ("2001:db8::/32", "FR")], to: database)
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: Self.sharedLink,
                extra: #"""
                    "geoip": { "database": "\#(database)" },
                    "proxies": { "trusted": ["127.0.0.1"], "countryHeader": "CF-IPCountry" },
                    """#))
        let server = try GatewayProcess(config: config, store: folder.file("store.sqlite"))
        #expect(try location(server)?.hasPrefix("https://shop.example/be?") == true, "127.0.0.1 is in Belgium in this database")
        #expect(try location(server, headers: ["CF-IPCountry: LU"])?.hasSuffix("&country=lu") == true, "the trusted header wins")
        #expect(try location(server, headers: ["CF-IPCountry: XX"])?.hasSuffix("&country=be") == true, "an unknown header falls to GeoIP")
        #expect(server.stop() == 0)

        // check-config opens the database, and names a broken one.
        #expect(try LinkoutBinary.run(["check-config", "--config", config]).status == 0)
        folder.write("country.mmdb", "not a database")
        let broken = try LinkoutBinary.run(["check-config", "--config", config])
        #expect(broken.status == 1)
        #expect(broken.stderr.contains("geoip.database"))
    }

    // MARK: Kinds

    @Test func prefetchesHeadsAndBotsAreRecordedButNotHits() throws {
        let server = try GatewayProcess.start(
            links: Self.sharedLink,
            extra: #"""
                "bots": { "userAgents": ["AcmeMonitor"] },
                """#)
        let id = UUID().uuidString.lowercased()
        let target = TokenBuilder.linkOut("/eu", token: TokenBuilder.minted(id: id))
        let safari =
            "User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1"
        for headers in [
            ["Purpose: prefetch"], ["Sec-Purpose: prefetch;prerender"], ["User-Agent: Slackbot-LinkExpanding 1.0"],
            ["User-Agent: acmemonitor/2"], [safari], [safari],
        ] {
            let response = try server.get(target, headers: headers)
            #expect(response.status == 302, "\(headers)")
            #expect(response[header: "Location"]?.hasPrefix("https://shop.example/nl?externalPurchaseId=\(id)") == true)
        }
        #expect(try fetch(port: server.port, "HEAD", target).status == 302)

        let metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
        #expect(metrics.contains(#"linkout_visits_total{link="eu",kind="shopper"} 2"#))
        #expect(metrics.contains(#"linkout_visits_total{link="eu",kind="prefetch"} 2"#))
        #expect(metrics.contains(#"linkout_visits_total{link="eu",kind="bot"} 2"#))
        #expect(metrics.contains(#"linkout_visits_total{link="eu",kind="head"} 1"#))
        #expect(server.stop() == 0)
        let token = try #require(try exportTokens(store: server.storePath).first)
        #expect(token["hits"] as? Int == 2)
        #expect(token["otherVisits"] as? Int == 5)
    }

    // MARK: Parameters

    @Test func everyParameterOptionAndASignatureCheckedByAnIndependentHMAC() throws {
        let folder = TemporaryFolder()
        let secret = "4f1c9a0e7b2d4c8e9f3a6b1d2e7c5a9b"
        folder.write("secret", secret + "\n")
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: #"""
                    [{ "id": "nl-web", "path": "/nl", "country": "nl",
                       "destinations": [{ "url": "https://shop.example/nl?plan=annual&utm_source=app#pay" }],
                       "parameters": { "signedReference": true, "country": true, "link": true, "token": true,
                                       "passThrough": ["utm_*", "gclid"] } },
                     { "id": "de", "path": "/de", "country": "de", "destinations": [{ "url": "https://shop.example/de" }] }]
                    """#, extra: #""signing": { "secretFile": "secret" },"#))
        let server = try GatewayProcess(config: config, store: folder.file("store.sqlite"))
        let id = UUID().uuidString.lowercased()
        let token = TokenBuilder.minted(id: id)
        let response = try server.get(
            TokenBuilder.linkOut("/nl", token: token) + "&utm_campaign=spring%20sale&utm_source=evil&gclid=abc&other=x")
        let location = try #require(response[header: "Location"])
        #expect(location.hasPrefix("https://shop.example/nl?plan=annual&utm_source=app&externalPurchaseId=\(id)&linkoutRef=v1.\(id)."))
        #expect(location.contains("&country=nl&link=nl-web&externalPurchaseToken="))
        #expect(location.hasSuffix("&utm_campaign=spring%20sale&gclid=abc#pay"), "utm_source is the destination's own; other is not listed")

        // The checkout's side, written independently of linkout: Python's hmac over everything before the
        // last dot, compared with the base64url signature.
        let reference = try #require(location.split(separator: "&").first { $0.hasPrefix("linkoutRef=") }.map { String($0.dropFirst(11)) })
        let check = try runPython(
            """
            import base64, hmac, hashlib, sys
            ref, secret = sys.argv[1], sys.argv[2].encode()
            message, _, signature = ref.rpartition(".")
            expected = base64.urlsafe_b64encode(hmac.new(secret, message.encode(), hashlib.sha256).digest()).rstrip(b"=").decode()
            version, pid, seen, link, country = message.split(".")
            print("ok" if hmac.compare_digest(expected, signature) else "bad", pid, link, country)
            """, arguments: [reference, secret])
        #expect(check == "ok \(id) nl-web nl")
        // (That a reference edited on the way fails is linkout's own verifier's test, in DestinationRoutingTests.)

        // A link without options: externalPurchaseId only, nothing passed through.
        let plain = try server.get(TokenBuilder.linkOut("/de", token: TokenBuilder.minted(id: id)) + "&utm_campaign=x")
        #expect(plain[header: "Location"] == "https://shop.example/de?externalPurchaseId=\(id)")
        #expect(server.stop() == 0)

        // A secret too short is refused at start, by name.
        folder.write("secret", "short")
        let refused = try LinkoutBinary.run(["check-config", "--config", config])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("signing.secretFile"))
        // Only serving needs the secret: an export works for someone who cannot read it.
        try FileManager.default.removeItem(atPath: folder.file("secret"))
        let export = try LinkoutBinary.run(["tokens", "export", "--config", config, "--store", server.storePath])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains(id))
    }

    @Test func anUnreadableCAFileIsRefusedBeforeServing() throws {
        let folder = TemporaryFolder()
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: Self.sharedLink,
                extra: #"""
                    "healthChecks": { "caFile": "missing-ca.pem" },
                    """#))
        let result = try LinkoutBinary.run(["check-config", "--config", config])
        #expect(result.status == 1)
        #expect(result.stderr.contains("healthChecks.caFile: cannot read"))
    }

    // MARK: Experiments

    @Test func experimentVariantsAreCountedInTheExport() throws {
        let folder = TemporaryFolder()
        let config = folder.write(
            "config.json",
            TestConfig.json(
                links: #"""
                    [{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://shop.example/nl" }],
                       "experiment": { "name": "price-test", "endsAt": "2099-01-01", "variants": [
                         { "name": "control", "url": "https://shop.example/nl?v=a", "weight": 1 },
                         { "name": "annual-first", "url": "https://shop.example/nl?v=b", "weight": 3 }] } },
                     { "id": "de", "path": "/de", "country": "de", "destinations": [{ "url": "https://shop.example/de" }],
                       "experiment": { "name": "ended", "endsAt": "2020-01-01", "variants": [
                         { "name": "a", "url": "https://shop.example/de?v=a" }, { "name": "b", "url": "https://shop.example/de?v=b" }] } }]
                    """#))
        let server = try GatewayProcess(config: config, store: folder.file("store.sqlite"))
        var sent: [String: String] = [:]
        for _ in 0..<200 {
            let id = UUID().uuidString.lowercased()
            let location = try #require(try location(server, "/nl", id: id))
            sent[id] = location.contains("?v=a") ? "control" : "annual-first"
        }
        let ended = try location(server, "/de")
        #expect(ended?.hasPrefix("https://shop.example/de?externalPurchaseId=") == true, "an ended experiment no longer splits")
        #expect(server.stop() == 0)

        let csv = try LinkoutBinary.run(["tokens", "export", "--store", server.storePath, "--format", "csv"])
        #expect(csv.status == 0)
        var counts: [String: Int] = [:]
        for line in csv.stdout.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let id = fields[0], experiment = fields[15], variant = fields[16]
            if fields[7] == "de" {
                #expect(experiment.isEmpty && variant.isEmpty)
                continue
            }
            #expect(experiment == "price-test")
            #expect(sent[id] == variant, "the export's variant is the one the shopper was sent to")
            counts[variant, default: 0] += 1
        }
        #expect(counts.values.reduce(0, +) == 200)
        // 1:3 by weight: 50 expected for control; far outside 25...80 would mean the weights are ignored.
        #expect((25...80).contains(counts["control"] ?? 0), "\(counts)")
    }
}

/// Runs a Python 3 program; its stdout, trimmed.
func runPython(_ program: String, arguments: [String]) throws -> String {
    try Command.python(["-c", program] + arguments).stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
}
