import Foundation
import LinkOutCore
import LinkOutTestSupport
import Testing

/// The other subcommands: check-config, tokens export, mint-token.
@Suite struct CommandTests {
    @Test func shippedConfigChecksClean() throws {
        let result = try LinkoutBinary.run(["check-config"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("OK"))
    }

    /// (what is broken, the config, text every message line must include)
    static let brokenConfigs: [(String, String, [String])] = [
        (
            "unknown country", #"[{"id":"a","path":"/a","country":"xx","destinations":[{"url":"https://a.example/"}]}]"#,
            ["links[0].country", "unknown country code 'xx'"]
        ),
        (
            "http destination", #"[{"id":"a","path":"/a","country":"nl","destinations":[{"url":"http://a.example/"}]}]"#,
            ["links[0].destinations[0].url", "https"]
        ),
        (
            "relative destination", #"[{"id":"a","path":"/a","country":"nl","destinations":[{"url":"/checkout"}]}]"#,
            ["links[0].destinations[0].url", "absolute"]
        ),
        (
            "query in path", #"[{"id":"a","path":"/a?x=1","country":"nl","destinations":[{"url":"https://a.example/"}]}]"#,
            ["links[0].path", "query"]
        ),
        (
            "duplicate path",
            #"[{"id":"a","path":"/a","country":"nl","destinations":[{"url":"https://a.example/"}]},{"id":"b","path":"/a","country":"de","destinations":[{"url":"https://a.example/"}]}]"#,
            ["links[1].path", "duplicate path"]
        ),
        (
            "zero weight", #"[{"id":"a","path":"/a","country":"nl","destinations":[{"url":"https://a.example/","weight":0}]}]"#,
            ["links[0].destinations[0].weight", "greater than 0"]
        ),
        (
            "negative weight", #"[{"id":"a","path":"/a","country":"nl","destinations":[{"url":"https://a.example/","weight":-2}]}]"#,
            ["links[0].destinations[0].weight", "greater than 0"]
        ),
        ("no destinations", #"[{"id":"a","path":"/a","country":"nl","destinations":[]}]"#, ["links[0].destinations", "at least one"]),
        (
            "misspelt key", #"[{"id":"a","path":"/a","country":"nl","destinatons":[{"url":"https://a.example/"}]}]"#,
            ["links[0].destinatons", "unknown key"]
        ),
        ("not JSON", "[{", ["invalid JSON at line"]),
    ]

    @Test(arguments: brokenConfigs.indices)
    func brokenConfigIsRefusedNamingTheKey(index: Int) throws {
        let (name, links, expected) = Self.brokenConfigs[index]
        let folder = TemporaryFolder()
        let config = folder.write("config.json", links == "[{" ? "{\"links\": [{" : TestConfig.json(links: links))
        let result = try LinkoutBinary.run(["check-config", "--config", config])
        #expect(result.status == 1, "\(name)")
        for text in expected {
            #expect(result.stderr.contains(text), "\(name): \(result.stderr)")
        }
        // serve refuses the same config before binding anything.
        let serve = try LinkoutBinary.run(["serve", "--config", config, "--listen", "127.0.0.1:0", "--store", folder.file("s.sqlite")])
        #expect(serve.status == 1, "\(name)")
    }

    @Test func missingConfigFileIsAClearError() throws {
        let result = try LinkoutBinary.run(["check-config", "--config", "/nonexistent/linkout.json"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot read config /nonexistent/linkout.json (no such file)"), "\(result.stderr)")
        let folder = TemporaryFolder()
        let notAFile = try LinkoutBinary.run(["check-config", "--config", folder.path])
        #expect(notAFile.status == 1)
        #expect(notAFile.stderr.contains("cannot read config \(folder.path) (it is a folder, not a file)"), "\(notAFile.stderr)")
        // The import commands and plist lint say why as well.
        let missing = folder.path + "/none.jsonl"
        for arguments in [["transactions", "import", missing], ["plist", "lint", missing]] {
            let run = try LinkoutBinary.run(
                arguments + (arguments[0] == "plist" ? [] : ["--config", LinkoutBinary.packageRoot.path + "/config/linkout.json"]))
            #expect(run.status == 1, "\(arguments)")
            #expect(run.stderr.contains("cannot read \(missing) (no such file)"), "\(arguments): \(run.stderr)")
        }
        // Zero loop threads is one per core, on the command line as in the config.
        let threads = try LinkoutBinary.run(["serve", "--threads", "300"])
        #expect(threads.status == 64 && threads.stderr.contains("--threads must be from 0 (one per core) to 256"), "\(threads.stderr)")
        let perCore = try GatewayProcess(
            config: folder.write("config.json", TestConfig.json(links: ConnectionTests.links)), store: folder.file("store.sqlite"),
            threads: 0)
        #expect(try perCore.get("/healthz").status == 200)
        #expect(perCore.stop() == 0)
    }

    /// --api-listen moves the API listener; without an api section there is none, and saying nothing let
    /// the operator believe it listened.
    @Test func apiListenWithoutAnAPISectionIsRefused() throws {
        let folder = TemporaryFolder()
        let config = folder.write("config.json", TestConfig.json(links: ConnectionTests.links))
        let run = try LinkoutBinary.run([
            "serve", "--config", config, "--store", folder.file("store.sqlite"), "--listen", "127.0.0.1:0",
            "--admin-listen", "off", "--api-listen", "127.0.0.1:0",
        ])
        #expect(run.status == 1)
        #expect(run.stderr.contains("error: --api-listen: \(config) has no api section"), "\(run.stderr)")
    }

    /// Without --config a command reads the clone's config/linkout.json; outside a clone, the package's
    /// /etc/linkout/linkout.json; with neither, it says both.
    @Test func theDefaultConfigIsTheClonesElseThePackages() throws {
        let folder = TemporaryFolder()
        let outside = try Command.run(LinkoutBinary.path, ["check-config"], directory: URL(fileURLWithPath: folder.path))
        if FileManager.default.fileExists(atPath: "/etc/linkout/linkout.json") {
            #expect(
                outside.stdoutText.contains("/etc/linkout/linkout.json") || outside.stderr.contains("/etc/linkout/linkout.json"),
                "\(outside)")
        } else {
            #expect(outside.status == 1)
            #expect(
                outside.stderr.contains("cannot read config config/linkout.json (no such file; nor /etc/linkout/linkout.json:"),
                "\(outside.stderr)")
        }
        // In the clone (the package's root here), the shipped config.
        let inside = try LinkoutBinary.run(["check-config", "--rules-only"])
        #expect(inside.stdout.hasPrefix("config/linkout.json: OK"), "\(inside)")
    }

    /// `api-key new NAME --keys-file FILE`: the line appended (the file made, owner-only, if missing), only the
    /// key printed, and the key is the one the file lets in; a name the file has already is refused, as is
    /// a file that does not parse, which is left as it was.
    @Test func apiKeyNewAppendsToTheKeysFile() throws {
        let folder = TemporaryFolder()
        let file = folder.file("api-keys")
        let first = try LinkoutBinary.run(["api-key", "new", "checkout", "--keys-file", file])
        #expect(first.status == 0, "\(first.stderr)")
        let key = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!key.isEmpty && !key.contains(" ") && !key.contains("\n"), "only the key on stdout: \(first.stdout)")
        #expect(first.stderr.contains("added the line for key checkout to \(file)"), "\(first.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(mode == 0o600, "a new keys file is its owner's only")
        // A file whose last line has no newline still gets the next key on a line of its own.
        let handle = try #require(FileHandle(forWritingAtPath: file))
        handle.seekToEndOfFile()
        handle.write(Data("# the backfill job".utf8))
        try handle.close()
        let second = try LinkoutBinary.run(["api-key", "new", "backfill", "--keys-file", file])
        #expect(second.status == 0, "\(second.stderr)")
        let backfill = second.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let keys = try APIKeys.parse(String(contentsOfFile: file, encoding: .utf8)).get()
        #expect(keys.entries.map(\.name) == ["checkout", "backfill"])
        #expect(keys.name(of: Array(key.utf8)) == "checkout")
        #expect(keys.name(of: Array(backfill.utf8)) == "backfill")

        let before = try String(contentsOfFile: file, encoding: .utf8)
        let again = try LinkoutBinary.run(["api-key", "new", "checkout", "--keys-file", file])
        #expect(again.status == 1)
        #expect(again.stdout.isEmpty, "no key printed when none was let in")
        #expect(again.stderr.contains("already has a key named checkout"), "\(again.stderr)")
        let broken = folder.write("broken-keys", "checkout not-a-digest\n")
        let refused = try LinkoutBinary.run(["api-key", "new", "other", "--keys-file", broken])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("has problems; fix them before adding a key"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == before)
        #expect(try String(contentsOfFile: broken, encoding: .utf8) == "checkout not-a-digest\n")
    }

    @Test func mintedTokenDecodesToWhatWasAsked() throws {
        let result = try LinkoutBinary.run([
            "mint-token", "--bundle-id", "com.example", "--app-apple-id", "1234567890",
            "--type", "SERVICES", "--created", "1706169600000", "--expires", "1706173200000",
            "--id", "11111111-2222-3333-4444-555555555555",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let token = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let json = try #require(TokenBase64.decode(Array(token.utf8)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        #expect(object["bundleId"] as? String == "com.example")
        #expect(object["appAppleId"] as? Int == 1234567890)
        #expect(object["externalPurchaseId"] as? String == "SANDBOX_11111111-2222-3333-4444-555555555555")
        #expect(object["tokenType"] as? String == "SERVICES")
        #expect(object["tokenCreationDate"] as? Int == 1706169600000)
        #expect(object["tokenExpirationDate"] as? Int == 1706173200000)

        let bad = try LinkoutBinary.run(["mint-token", "--bundle-id", "com.example", "--app-apple-id", "1", "--type", "NOPE"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--type must be one of"))
    }

    @Test func exportAsCSVAndFromAMissingStore() throws {
        let folder = TemporaryFolder()
        let server = try GatewayProcess(store: folder.file("store.sqlite"))
        let id = UUID().uuidString.lowercased()
        #expect(try server.get(TokenBuilder.linkOut("/fr", token: TokenBuilder.minted(id: id))).status == 302)
        let csv = try LinkoutBinary.run(["tokens", "export", "--store", server.storePath, "--format", "csv"])
        #expect(csv.status == 0)
        let lines = csv.stdout.split(separator: "\n")
        #expect(
            lines.first
                == "externalPurchaseId,appAppleId,bundleId,tokenCreationDate,tokenType,tokenExpirationDate,environment,link,country,destination,firstSeen,lastSeen,hits,stale,otherVisits,experiment,variant,path,report,reportedAs"
        )
        #expect(lines.count == 2)
        #expect(lines.last?.hasPrefix("\(id),1234567890,com.example,") == true)
        #expect(lines.last?.contains(",production,fr,fr,https://checkout.example.com/fr,") == true)

        let missing = try LinkoutBinary.run(["tokens", "export", "--store", folder.file("nothing.sqlite")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no store at this path"))
        #expect(!FileManager.default.fileExists(atPath: folder.file("nothing.sqlite")), "export never creates a store")
    }

    /// A made-up token must never reach Apple's production books: minted tokens are sandbox ones unless
    /// `--production` is asked for.
    @Test func mintedTokensAreSandboxUnlessProductionIsAsked() throws {
        func id(_ extra: [String]) throws -> String? {
            let result = try LinkoutBinary.run(["mint-token", "--bundle-id", "com.example", "--app-apple-id", "1234567890"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            let json = try #require(TokenBase64.decode(Array(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8)))
            return try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])["externalPurchaseId"] as? String
        }
        #expect(try id([])?.hasPrefix("SANDBOX_") == true)
        #expect(try id(["--sandbox"])?.hasPrefix("SANDBOX_") == true)
        let production = try #require(try id(["--production"]))
        #expect(!production.hasPrefix("SANDBOX") && UUID(uuidString: production) != nil, "\(production)")
        let both = try LinkoutBinary.run(["mint-token", "--bundle-id", "com.example", "--app-apple-id", "1", "--sandbox", "--production"])
        #expect(both.status != 0)
    }

    @Test func mintTokenURLWorksEndToEnd() throws {
        let server = try GatewayProcess.start()
        let minted = try LinkoutBinary.run([
            "mint-token", "--bundle-id", "com.example", "--app-apple-id", "1234567890", "--url", "http://127.0.0.1:\(server.port)/de",
        ])
        let url = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let target = String(url.dropFirst("http://127.0.0.1:\(server.port)".count))
        #expect(try server.get(target).status == 302)
        for bad in ["ftp://x/nl", "http://127.0.0.1:8080/nl?x=1", "nl", "http://127.0.0.1:8080"] {
            let refused = try LinkoutBinary.run(["mint-token", "--bundle-id", "com.example", "--app-apple-id", "1", "--url", bad])
            #expect(
                refused.status == 64 && refused.stderr.contains("--url must be an http:// or https:// link path"),
                "\(bad): \(refused.stderr)")
        }
    }
}

/// The deployment files in config/.
@Suite struct DeploymentFileTests {
    @Test func productionExampleChecksClean() throws {
        // Its paths are the production host's: only the config's own rules are checked here.
        let result = try LinkoutBinary.run(["check-config", "--config", "config/production.example.json", "--rules-only"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("6 links"))
        #expect(result.stdout.contains("countries: be de es fr it lu nl"), "a shared link's countries are listed")
        // It carries the EU's and Japan's commission terms, each from its first day, for the statement.
        let text = try String(
            contentsOf: LinkoutBinary.packageRoot.appendingPathComponent("config/production.example.json"), encoding: .utf8)
        let loaded = try ConfigLoader.load(json: Array(text.utf8), baseDirectory: "/etc/linkout").get()
        #expect(loaded.commission.regions.map(\.name) == ["EU", "JP"])
        #expect(loaded.commission.region(of: "de")?.linkOut.from == UTCDate.parseDay("2026-10-01"))
        #expect(loaded.commission.region(of: "jp")?.linkOut.from == UTCDate.parseDay("2025-12-18"))
        #expect(
            loaded.commission.regions.allSatisfy {
                $0.linkOut.ratePPM == 150_000 && $0.linkOut.reducedRatePPM == 100_000 && $0.linkOut.windowDays == 7
            })
        #expect(loaded.commission.region(of: "de")?.countries.count == 27)
        // The EU's in-app terms (20 %, 10 %, from the region's day); Japan's are not known to us yet.
        #expect(
            loaded.commission.region(of: "de")?.inApp
                == CommissionTerms(
                    from: UTCDate.parseDay("2026-10-01")!, ratePPM: 200_000, reducedRatePPM: 100_000, windowDays: nil))
        #expect(loaded.commission.region(of: "jp")?.inApp == nil)
    }

    /// The production example's commented sections are what an operator gets by uncommenting them: with
    /// the files they name in place (here, in a scratch folder standing for the host's places), the whole
    /// pre-flight passes, reporting's key, the API's keys file and the notifications' roots included. And
    /// every secret it names is a credential the unit hands the service.
    @Test func productionExampleWithItsCommentedSectionsUncommentedChecksClean() throws {
        let root = LinkoutBinary.packageRoot.path
        let example = try String(contentsOfFile: root + "/config/production.example.json", encoding: .utf8)
        // Inside the object, `//   ` (three spaces) starts a commented config line; `// ` is prose.
        var config = example.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.replacing(#/^(  +)//   /#, with: { $0.1 }) }.joined(separator: "\n")
        for section in [
            #""reporting": {"#, #""api": {"#, #""notifications": {"#, #""signing": {"#, #""geoip": {"#, #""paymentProviders": {"#,
        ] {
            #expect(config.contains("  " + section), "no commented \(section) section in the example")
        }

        let unit = try String(contentsOfFile: root + "/config/linkout.service", encoding: .utf8)
        let credentials = Set(config.matches(of: #/"/run/credentials/linkout\.service/([A-Za-z0-9._-]+)"/#).map { String($0.output.1) })
        #expect(credentials == ["reporting-key.p8", "api-keys", "signing-secret", "stripe-webhook-secrets", "paddle-webhook-secrets"])
        for name in credentials {
            #expect(unit.contains("\nLoadCredential=\(name):/etc/linkout/\(name)\n"), "the unit does not load \(name)")
            #expect(unit.contains("\nSetCredential=\(name):missing\n"), "the unit has no stand-in for a missing \(name)")
        }

        // The host's places, in a scratch folder; the listeners on free ports of this machine.
        let folder = TemporaryFolder()
        for name in ["credentials", "lib", "log"] {
            try FileManager.default.createDirectory(atPath: folder.file(name), withIntermediateDirectories: true)
        }
        let key = try Command.run(
            "/usr/bin/env",
            [
                "openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
                folder.file("credentials/reporting-key.p8"),
            ])
        try #require(key.status == 0, "\(key.stderr)")
        folder.write("credentials/api-keys", APIKeys.newKey(name: "checkout").line + "\n")
        folder.write("credentials/signing-secret", String(repeating: "5", count: 64) + "\n")
        folder.write("credentials/stripe-webhook-secrets", "whsec_" + String(repeating: "5", count: 32) + "\n")
        folder.write("credentials/paddle-webhook-secrets", "pdl_ntfset_01" + String(repeating: "5", count: 24) + "\n")
        try MMDBWriter.write([("127.0.0.0/8", "BE")], to: folder.file("GeoLite2-Country.mmdb"))
        let places = [
            ("/run/credentials/linkout.service/", folder.file("credentials/")), ("/var/lib/linkout/", folder.file("lib/")),
            ("/var/log/linkout/", folder.file("log/")), ("/usr/share/linkout/Public", root + "/Public"),
            ("/var/lib/GeoIP/GeoLite2-Country.mmdb", folder.file("GeoLite2-Country.mmdb")),
            ("0.0.0.0:8080", "127.0.0.1:\(try PreflightTests.freePort())"),
            ("127.0.0.1:9464", "127.0.0.1:\(try PreflightTests.freePort())"),
            ("10.0.0.5:8081", "127.0.0.1:\(try PreflightTests.freePort())"),
        ]
        for (place, here) in places {
            #expect(config.contains(place), "the example no longer names \(place)")
            config = config.replacingOccurrences(of: place, with: here)
        }
        let path = folder.write("linkout.json", config)
        let checked = try LinkoutBinary.run(["check-config", "--config", path])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(checked.stdout.contains("6 links"))

        // The key is read, not just named: the unit's stand-in for a missing file is refused, naming it.
        folder.write("credentials/reporting-key.p8", "missing")
        let missing = try LinkoutBinary.run(["check-config", "--config", path])
        #expect(missing.status == 1)
        #expect(
            missing.stderr.contains(
                "reporting.keyFile: \(folder.file("credentials/reporting-key.p8")) is the systemd unit's stand-in for a missing file: put the file in /etc/linkout/reporting-key.p8"
            ), "\(missing.stderr)")
    }

    /// What each make target installs, as `make -n` says it would call scripts/install-deps and
    /// `install-deps --list` says that call installs: `make run` (and the builds) the C libraries and no
    /// test tool; `make deb` adds dpkg-dev; `make test` everything, the package's test tools included.
    @Test func makeRunInstallsWhatRunningNeedsAndMakeTestTheTestTools() throws {
        let root = LinkoutBinary.packageRoot
        func installs(_ target: String) throws -> Set<String> {
            let dry = try Command.run("/usr/bin/env", ["make", "-n", target], directory: root)
            try #require(dry.status == 0, "make -n \(target): \(dry.stderr)")
            let calls = dry.stdoutText.split(separator: "\n").filter { $0.hasPrefix("scripts/install-deps") }
            try #require(!calls.isEmpty, "make \(target) installs nothing:\n\(dry.stdoutText)")
            var packages: Set<String> = []
            for call in calls {
                let listed = try Command.run(
                    root.path + "/scripts/install-deps", ["--list"] + call.split(separator: " ").dropFirst().map(String.init))
                try #require(listed.status == 0, "\(call) --list: \(listed.stderr)")
                packages.formUnion(listed.stdoutText.split(separator: "\n").map { $0.hasPrefix("pip:") ? "pip" : String($0) })
            }
            return packages
        }
        let libraries: Set = ["libevent-dev", "libsqlite3-dev", "libpq-dev", "libmaxminddb-dev", "libcurl4-openssl-dev", "pkg-config"]
        let testTools: Set = ["chromium", "chromium-driver", "postgresql", "python3", "python3-jwt", "mmdb-bin", "debootstrap", "pip"]
        for target in ["run", "release", "build"] {
            let packages = try installs(target)
            #expect(packages.isSuperset(of: libraries), "make \(target): \(packages.sorted())")
            #expect(
                packages.isDisjoint(with: testTools.union(["dpkg-dev"])),
                "make \(target) installs \(packages.intersection(testTools).sorted())")
        }
        let deb = try installs("deb")
        #expect(deb.contains("dpkg-dev") && deb.isDisjoint(with: testTools), "make deb: \(deb.sorted())")
        #expect(try installs("test-package").isSuperset(of: ["dpkg-dev", "debootstrap", "iproute2", "curl"]))
        let test = try installs("test")
        #expect(
            test.isSuperset(of: libraries.union(testTools).union(["dpkg-dev", "iproute2", "curl", "openssl"])),
            "make test: \(test.sorted())")
    }

    /// The unit runs the gateway with the hardening the deployment docs promise.
    @Test func systemdUnitIsHardened() throws {
        let unit = try String(contentsOf: LinkoutBinary.packageRoot.appendingPathComponent("config/linkout.service"), encoding: .utf8)
        let settings = Set(unit.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
        for line in [
            "ExecStart=/usr/local/bin/linkout serve --config /etc/linkout/linkout.json", "ExecReload=/bin/kill -HUP $MAINPID",
            "NoNewPrivileges=yes", "ProtectSystem=strict", "StateDirectory=linkout", "LogsDirectory=linkout",
            "User=linkout", "CapabilityBoundingSet=", "Type=notify",
        ] {
            #expect(settings.contains(line), "missing \(line)")
        }
        // The production example writes only where the unit lets it.
        let example = try String(
            contentsOf: LinkoutBinary.packageRoot.appendingPathComponent("config/production.example.json"), encoding: .utf8)
        #expect(example.contains("\"/var/lib/linkout/linkout.sqlite\""))
        #expect(example.contains("\"/var/log/linkout/access.log\""))
    }
}
