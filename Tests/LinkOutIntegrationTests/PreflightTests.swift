import Foundation
import LinkOutCore
import LinkOutServer
import Testing

#if canImport(Glibc)
import Glibc
import LinkOutTestSupport
#endif

/// check-config is serve's pre-flight: whatever keeps serve from starting (a missing page, a log folder
/// that cannot be made, the admin listener on the main port, a port another program holds) makes
/// check-config fail too, with the same line; and what serve can fix by itself (a missing log folder) is
/// no problem for either.
@Suite(.serialized) struct PreflightTests {
    /// A port free a moment ago, on 127.0.0.1.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Listens on `port` the way a program other than linkout would: without SO_REUSEPORT (or with it,
    /// sharing the port as a linkout would, but saying no store).
    static func occupy(_ port: Int, reusePort: Bool = false) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        if reusePort { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        try #require(bound && listen(fd, 8) == 0)
        return fd
    }

    /// Whether a socket listens on `port`: a bind without SO_REUSEPORT fails while one does (SO_REUSEADDR,
    /// so that connections in TIME_WAIT do not count).
    static func isListenedOn(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) != 0 }
        }
    }

    private func config(_ folder: TemporaryFolder, listen: Int, admin: String, publicDir: String? = nil, accessLog: String? = nil) -> String
    {
        var extra =
            #""server": { "listen": "127.0.0.1:\#(listen)", "adminListen": "\#(admin)" }, "store": "\#(folder.file("store.sqlite"))","#
        if let accessLog { extra += #""accessLog": { "destination": "\#(accessLog)" },"# }
        var text = TestConfig.json(links: PostgresTests.links, extra: extra)
        if let publicDir { text = text.replacingOccurrences(of: LinkoutBinary.packageRoot.path + "/Public", with: publicDir) }
        return folder.write("config.json", text)
    }

    /// check-config and serve on the same config: both refuse, both naming `text`.
    private func expectBothRefuse(_ config: String, naming text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let checked = try LinkoutBinary.run(["check-config", "--config", config])
        #expect(checked.status == 1, "check-config said OK: \(checked.stdout)", sourceLocation: sourceLocation)
        #expect(checked.stderr.contains(text), "\(checked.stderr)", sourceLocation: sourceLocation)
        let served = try LinkoutBinary.run(["serve", "--config", config])
        #expect(served.status == 1, sourceLocation: sourceLocation)
        #expect(served.stderr.contains(text), "\(served.stderr)", sourceLocation: sourceLocation)
        #expect(!served.stdout.contains("listening"), sourceLocation: sourceLocation)
    }

    @Test func aMissingPageIsRefusedByBoth() throws {
        let folder = TemporaryFolder()
        let pages = folder.file("pages")
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        folder.write("pages/page.html", "<html lang=\"{{lang}}\">{{heading}}{{text}}</html>")
        try FileManager.default.createDirectory(atPath: pages + "/messages", withIntermediateDirectories: true)
        for code in ShopperLanguage.codes where code != "ru" {
            try FileManager.default.copyItem(
                atPath: LinkoutBinary.packageRoot.path + "/Public/messages/\(code).json", toPath: pages + "/messages/\(code).json")
        }
        try expectBothRefuse(
            config(folder, listen: try Self.freePort(), admin: "off", publicDir: pages),
            naming: "publicDir: \(pages)/messages/ru.json is missing")
        try expectBothRefuse(
            config(folder, listen: try Self.freePort(), admin: "off", publicDir: folder.file("nothing")),
            naming: "publicDir: cannot read page \(folder.file("nothing"))/page.html")
    }

    /// Shopper pages without the dashboard's: serve starts (the dashboard is no shopper's), says at start-up
    /// that the dashboard is off, and its 404 says what to set.
    @Test func aPublicDirWithoutTheDashboardIsSaidAtStartAndOnItsPage() throws {
        let folder = TemporaryFolder()
        let pages = folder.file("pages")
        try FileManager.default.copyItem(atPath: LinkoutBinary.packageRoot.path + "/Public", toPath: pages)
        try FileManager.default.removeItem(atPath: pages + "/admin")
        let server = try GatewayProcess(
            config: config(folder, listen: 0, admin: "127.0.0.1:0", publicDir: pages), store: folder.file("store.sqlite"))
        let log = try String(contentsOfFile: server.logPath, encoding: .utf8)
        #expect(log.contains("the dashboard is OFF: its pages were not found (\(pages)/admin/dashboard.html cannot be read)"), "\(log)")
        let page = try fetch(port: server.adminPort, "GET", "/")
        #expect(page.status == 404)
        #expect(
            page.bodyText.contains("\(pages)/admin/dashboard.html cannot be read): set publicDir to a folder holding admin/dashboard.html"),
            "\(page.bodyText)")
        #expect(try fetch(port: server.adminPort, "GET", "/metrics").status == 200)
        #expect(server.stop() == 0)
    }

    @Test func anAccessLogFolderThatCannotBeMadeIsRefusedByBothAndAMissingOneIsMade() throws {
        let folder = TemporaryFolder()
        folder.write("plain-file", "x")
        try expectBothRefuse(
            config(folder, listen: try Self.freePort(), admin: "off", accessLog: folder.file("plain-file/logs/access.log")),
            naming: "accessLog.destination: cannot create the folder")

        // A folder that does not exist yet is made, like the store's.
        let missing = folder.file("logs/linkout/access.log")
        let fine = config(folder, listen: 0, admin: "off", accessLog: missing)
        let checked = try LinkoutBinary.run(["check-config", "--config", fine])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.file("logs")), "check-config makes nothing")
        let server = try GatewayProcess(config: fine, store: folder.file("store.sqlite"), extraArguments: ["--access-log", missing])
        #expect(try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302)
        #expect(server.stop() == 0)
        #expect(FileManager.default.fileExists(atPath: missing))
    }

    /// A secret file that holds nothing, or the systemd unit's stand-in for a missing one (the word
    /// `missing`), is named as such by both, not as a malformed key or a short secret.
    @Test func anEmptyOrMissingCredentialIsNamedByBoth() throws {
        let folder = TemporaryFolder()
        folder.write("keys", APIKeys.newKey(name: "checkout").line + "\n")
        folder.write("secret", String(repeating: "s", count: 40))
        func withSecrets(keys: String, secret: String) -> String {
            TestConfig.json(
                links: PostgresTests.links,
                extra: """
                    "server": { "listen": "127.0.0.1:0", "adminListen": "off" }, "store": "\(folder.file("store.sqlite"))",
                    "api": { "listen": "127.0.0.1:0", "keysFile": "\(keys)" }, "signing": { "secretFile": "\(secret)" },
                    """)
        }
        folder.write("empty", "")
        try expectBothRefuse(
            folder.write("c1.json", withSecrets(keys: folder.file("empty"), secret: folder.file("secret"))),
            naming: "api.keysFile: \(folder.file("empty")) is empty")
        folder.write("missing", Preflight.missingCredential)
        try expectBothRefuse(
            folder.write("c2.json", withSecrets(keys: folder.file("keys"), secret: folder.file("missing"))),
            naming:
                "signing.secretFile: \(folder.file("missing")) is the systemd unit's stand-in for a missing file: put the file in /etc/linkout/missing"
        )
        // And the two real files pass.
        let fine = try LinkoutBinary.run([
            "check-config", "--config", folder.write("c3.json", withSecrets(keys: folder.file("keys"), secret: folder.file("secret"))),
        ])
        #expect(fine.status == 0, "\(fine.stderr)")
    }

    @Test func theAdminListenerOnTheMainPortIsRefusedByBoth() throws {
        let port = try Self.freePort()
        let folder = TemporaryFolder()
        try expectBothRefuse(
            config(folder, listen: port, admin: "127.0.0.1:\(port)"),
            naming: "server.adminListen: 127.0.0.1:\(port) is the main listener's address")
        try expectBothRefuse(config(folder, listen: port, admin: "0.0.0.0:\(port)"), naming: "server.adminListen")
    }

    @Test func aPortAnotherProgramHoldsIsRefusedByBothButARunningLinkoutIsNot() throws {
        let port = try Self.freePort(), admin = try Self.freePort()
        let folder = TemporaryFolder()
        let fd = try Self.occupy(port)
        try expectBothRefuse(
            config(folder, listen: port, admin: "127.0.0.1:\(admin)"), naming: "server.listen: cannot listen on 127.0.0.1:\(port)")
        // Asked for on the command line, the address is the option's problem, not the file's.
        let asked = try LinkoutBinary.run([
            "serve", "--config", config(folder, listen: admin, admin: "off"), "--listen", "127.0.0.1:\(port)", "--store",
            folder.file("store.sqlite"),
        ])
        #expect(asked.status == 1)
        #expect(asked.stderr.contains("error: --listen: cannot listen on 127.0.0.1:\(port)"), "\(asked.stderr)")
        close(fd)
        let adminFD = try Self.occupy(admin)
        try expectBothRefuse(
            config(folder, listen: port, admin: "127.0.0.1:\(admin)"), naming: "server.adminListen: cannot listen on 127.0.0.1:\(admin)")
        close(adminFD)

        // A linkout already serving on both ports (SO_REUSEPORT on both listeners) is the restart with no
        // gap: no problem.
        let shared = config(folder, listen: port, admin: "127.0.0.1:\(admin)")
        let running = try GatewayProcess(
            config: shared, store: folder.file("store.sqlite"),
            extraArguments: [
                "--listen", "127.0.0.1:\(port)", "--admin-listen", "127.0.0.1:\(admin)",
            ])
        let checked = try LinkoutBinary.run(["check-config", "--config", shared])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(
            checked.stderr.contains(
                "note: \(shared): server.listen: 127.0.0.1:\(port) is also served by linkout (pid \(running.process.processIdentifier)) with the same store"
            ), "\(checked.stderr)")
        #expect(running.stop() == 0)
    }

    /// Two stores on one port would split the shoppers between them, each recording some of the tokens:
    /// a second linkout with another store (or another config's store) is refused by check-config and
    /// serve, and so is a port shared with SO_REUSEPORT by a process that says no store.
    @Test func anAddressServedByALinkoutOfAnotherStoreIsRefusedByBoth() throws {
        let port = try Self.freePort(), admin = try Self.freePort()
        let first = TemporaryFolder(), second = TemporaryFolder()
        let running = try GatewayProcess(
            config: config(first, listen: port, admin: "127.0.0.1:\(admin)"), store: first.file("store.sqlite"),
            extraArguments: [
                "--listen", "127.0.0.1:\(port)", "--admin-listen", "127.0.0.1:\(admin)",
            ])
        try expectBothRefuse(
            config(second, listen: port, admin: "127.0.0.1:\(admin)"),
            naming:
                "server.listen: 127.0.0.1:\(port) is already served by another linkout (pid \(running.process.processIdentifier)) with a different store"
        )
        // The admin listener alone too: the dashboard would answer from either store.
        try expectBothRefuse(
            config(second, listen: try Self.freePort(), admin: "127.0.0.1:\(admin)"),
            naming:
                "server.adminListen: 127.0.0.1:\(admin) is already served by another linkout (pid \(running.process.processIdentifier)) with a different store"
        )
        // The refused one took no shopper: every link-out still lands in the first store.
        for _ in 0..<10 { #expect(try running.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302) }
        #expect(running.stop() == 0)
        let export = try LinkoutBinary.run(["tokens", "export", "--store", first.file("store.sqlite")])
        #expect(export.stdout.split(separator: "\n").count == 10)

        // Shared with SO_REUSEPORT by something that says no store: not a linkout of this store.
        let fd = try Self.occupy(port, reusePort: true)
        defer { close(fd) }
        try expectBothRefuse(
            config(second, listen: port, admin: "off"),
            naming:
                "server.listen: 127.0.0.1:\(port) is already served by another process that shares it with SO_REUSEPORT and says no store")
    }

    /// A stopping linkout names its port as served only while it listens there: once its listener has
    /// closed, though it lives on to answer what it has in flight, the kernel may hand that port to the next
    /// linkout of any store (with port 0, at random), which must start rather than find it "served".
    @Test func aPortALinkoutStoppedListeningOnIsFreeToAnotherStoreWhileItDrains() throws {
        let port = try Self.freePort()
        let first = TemporaryFolder(), second = TemporaryFolder()
        let listen = ["--listen", "127.0.0.1:\(port)", "--admin-listen", "off"]
        let draining = try GatewayProcess(
            config: config(first, listen: port, admin: "off"), store: first.file("store.sqlite"), extraArguments: listen)
        #expect(try draining.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302)

        // Another connection holds the first store's write lock: a visit's answer waits for its commit
        // (strict, as shipped), and the first linkout's drain waits for that answer.
        let lock = Process(), lockInput = Pipe(), lockOutput = Pipe()
        lock.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        lock.arguments = [
            "python3", "-c",
            """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            sys.stdin.read()
            db.execute("COMMIT")
            """, first.file("store.sqlite"),
        ]
        lock.standardInput = lockInput
        lock.standardOutput = lockOutput
        try lock.run()
        defer {
            try? lockInput.fileHandleForWriting.close()
            lock.waitUntilExit()
        }
        #expect(String(decoding: lockOutput.fileHandleForReading.availableData, as: UTF8.self).contains("locked"))

        let answers = LockedList()
        Thread.detachNewThread {
            let connection = try? HTTPConnection(port: port, timeoutSeconds: 20)
            let status = (try? connection?.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status) ?? 0
            answers.append("\(status)")
        }
        Thread.sleep(forTimeInterval: 0.3)
        draining.signal(SIGTERM)
        // With no grace period its listener closes 50 ms after the signal: wait until the port binds without
        // SO_REUSEPORT, the first linkout still running.
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline, Self.isListenedOn(port) { Thread.sleep(forTimeInterval: 0.02) }
        try #require(draining.process.isRunning, "the first linkout left before the test could start the second: \(draining.log)")
        #expect(answers.snapshot.isEmpty, "the visit in flight was answered while the store was locked")

        let next = try GatewayProcess(
            config: config(second, listen: port, admin: "off"), store: second.file("store.sqlite"), extraArguments: listen)
        #expect(try next.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())).status == 302)

        // The lock goes: the visit in flight is answered and kept, and the first linkout finishes its stop.
        try lockInput.fileHandleForWriting.close()
        #expect(draining.stop() == 0)
        #expect(answers.snapshot == ["302"])
        #expect(try exportTokens(store: first.file("store.sqlite")).count == 2)
        #expect(next.stop() == 0)
        #expect(try exportTokens(store: second.file("store.sqlite")).count == 1)
    }

    /// check-config names every problem at once, whatever its kind (a port taken, a key file that is no
    /// key, a secret too short), so fixing one does not reveal the next; and its OK says what is on.
    @Test func checkConfigNamesEveryProblemAtOnceAndItsOKSaysWhatIsOn() throws {
        let folder = TemporaryFolder()
        let port = try Self.freePort(), api = try Self.freePort()
        let taken = try Self.occupy(api)
        defer { close(taken) }
        folder.write("not-a-key.p8", "not a key\n")
        folder.write("short-secret", "short\n")
        folder.write("api-keys", "checkout \(String(repeating: "0", count: 64))\n")
        let reporting =
            #""reporting": { "keyFile": "not-a-key.p8", "keyId": "2X9R4HXF34", "issuerId": "57246542-96fe-1a63-e053-0824d011072a" },"#
        let extra =
            #""server": { "listen": "127.0.0.1:\#(port)", "adminListen": "off" }, "store": "\#(folder.file("store.sqlite"))","#
            + reporting + #""api": { "listen": "127.0.0.1:\#(api)", "keysFile": "api-keys" }, "signing": { "secretFile": "short-secret" },"#
        let config = folder.write("config.json", TestConfig.json(links: PostgresTests.links, extra: extra))
        for command in [["check-config"], ["serve"]] {
            let result = try LinkoutBinary.run(command + ["--config", config])
            #expect(result.status == 1)
            let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("error: ") }
            #expect(errors.contains { $0.contains("signing.secretFile:") }, "\(command): \(result.stderr)")
            #expect(errors.contains { $0.contains("reporting.keyFile:") }, "\(command): \(result.stderr)")
            #expect(errors.contains { $0.contains("api.listen: cannot listen on 127.0.0.1:\(api)") }, "\(command): \(result.stderr)")
        }

        // A config with everything on says so; the shipped one says reporting is off.
        let key = try ReportingFixture()
        let on = try LinkoutBinary.run(["check-config", "--config", key.configPath])
        #expect(on.status == 0, "\(on.stderr)")
        #expect(
            on.stdout.contains("; reporting on (key \(key.production.keyId)); api 127.0.0.1:0; no notifications; admin 127.0.0.1:0)"),
            "\(on.stdout)")
        let shipped = try LinkoutBinary.run([
            "check-config", "--config", LinkoutBinary.packageRoot.path + "/config/linkout.json", "--rules-only",
        ])
        #expect(shipped.stdout.contains("reporting OFF: no token is sent to Apple"), "\(shipped.stdout)")
    }
}
