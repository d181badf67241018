import Foundation
import LinkOutTestSupport
import Testing

/// Real `linkout` processes on one PostgreSQL database (a throwaway server started by the tests, see
/// LinkOutTestSupport/PostgresServer.swift). Without PostgreSQL installed these fail, saying what to install.
@Suite struct PostgresTests {
    /// Three weighted destinations, so that agreeing on one is not luck.
    static let links = #"""
        [{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [
            { "url": "https://a.example.com/nl", "weight": 2 }, { "url": "https://b.example.com/nl" },
            { "url": "https://c.example.com/nl", "weight": 3 } ] }]
        """#

    /// A migrated database and a config for it.
    private func database(_ folder: TemporaryFolder) throws -> (url: String, config: String) {
        let url = try PostgresServer.createDatabase()
        let migrate = try LinkoutBinary.run(["store", "migrate", "--store", url])
        try #require(migrate.status == 0, "migrate failed: \(migrate.stderr)")
        return (url, folder.write("config.json", TestConfig.json(links: Self.links)))
    }

    @Test func migrateExportAndServeFollowTheConfigsStoreURL() throws {
        let folder = TemporaryFolder()
        let url = try PostgresServer.createDatabase()
        // A password in the URL is never printed (trust authentication ignores it).
        let withPassword = url.replacingOccurrences(of: "linkout@", with: "linkout:hunter2@")
        let config = folder.write("config.json", TestConfig.json(links: Self.links, extra: #""store": "\#(withPassword)","#))

        // Serving a database whose schema is behind is refused, with the command that fixes it.
        let refused = try LinkoutBinary.run(["serve", "--config", config, "--listen", "127.0.0.1:0", "--admin-listen", "off"])
        #expect(refused.status == 1)
        // The URL shown hides its password, so the command asks for the URL rather than one that would log in with "***".
        #expect(
            refused.stderr.contains(
                "run `linkout store migrate --store URL` with this store's URL, password included (postgres://linkout:***@127.0.0.1:"),
            "\(refused.stderr)")
        #expect(!refused.stderr.contains("hunter2"))

        let migrated = try LinkoutBinary.run(["store", "migrate", "--config", config])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("applied migrations 1, 2"))
        #expect(!migrated.stdout.contains("hunter2"))
        let again = try LinkoutBinary.run(["store", "migrate", "--config", config])
        #expect(again.status == 0)
        #expect(again.stdout.contains("schema already at version"))

        let server = try GatewayProcess(config: config, store: url)
        let id = UUID().uuidString.lowercased()
        #expect(try server.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id))).status == 302)
        #expect(server.stop() == 0)
        #expect(!server.log.contains("hunter2"))
        let export = try LinkoutBinary.run(["tokens", "export", "--config", config])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.contains(#""externalPurchaseId":"\#(id)""#))
        #expect(export.stdout.contains(#""hits":1"#))
    }

    @Test func migrateRefusesASQLitePath() throws {
        let folder = TemporaryFolder()
        let result = try LinkoutBinary.run(["store", "migrate", "--store", folder.file("store.sqlite")])
        #expect(result.status == 1)
        #expect(result.stderr.contains("not a postgres:// URL"))
    }

    /// Two instances on one database, four client threads each, 300 ids sent 1 to 25 times each, spread
    /// over both instances at random: every id is one token whose hits are the 302s it got, and both
    /// instances send an id to the same destination.
    @Test func twoInstancesUnderConcurrentLoadCountEveryVisitOnce() throws {
        let folder = TemporaryFolder()
        let (url, config) = try database(folder)
        let instances = [try GatewayProcess(config: config, store: url), try GatewayProcess(config: config, store: url)]

        let ids = (0..<300).map { _ in UUID().uuidString.lowercased() }
        // The same token for every visit of an id, as a shopper's retries carry.
        let tokens = Dictionary(uniqueKeysWithValues: ids.map { ($0, TokenBuilder.minted(id: $0)) })
        var requests: [String] = []
        for (index, id) in ids.enumerated() { requests += Array(repeating: id, count: 1 + index % 25) }
        requests.shuffle()
        let threadsPerInstance = 4
        let workers = instances.count * threadsPerInstance
        let shares = (0..<workers).map { worker in stride(from: worker, to: requests.count, by: workers).map { requests[$0] } }

        let outcomes = Outcomes()
        let group = DispatchGroup()
        for worker in 0..<workers {
            let instance = worker % instances.count
            let port = instances[instance].port
            let share = shares[worker]
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var connection: HTTPConnection?
                for id in share {
                    do {
                        if connection == nil { connection = try HTTPConnection(port: port) }
                        let response = try connection!.request("GET", TokenBuilder.linkOut("/nl", token: tokens[id]!))
                        outcomes.add(id: id, instance: instance, status: response.status, location: response[header: "location"])
                    } catch {
                        connection = nil
                        outcomes.add(id: id, instance: instance, status: 0, location: nil)
                    }
                }
            }
        }
        group.wait()
        for instance in instances { #expect(instance.stop() == 0) }

        let results = outcomes.all
        #expect(results.count == requests.count)
        let failed = results.filter { $0.status != 302 }
        #expect(failed.isEmpty, "\(failed.count) of \(results.count) requests got no 302: \(failed.prefix(5).map(\.status))")
        var redirects: [String: Int] = [:]
        var locations: [String: Set<String>] = [:]
        var servedBy: [String: Set<Int>] = [:]
        for result in results where result.status == 302 {
            redirects[result.id, default: 0] += 1
            locations[result.id, default: []].insert(result.location ?? "")
            servedBy[result.id, default: []].insert(result.instance)
        }
        #expect(servedBy.values.filter { $0.count == 2 }.count > 200, "most ids were sent to both instances")
        let split = locations.filter { $0.value.count != 1 }
        #expect(split.isEmpty, "ids sent to different destinations: \(split.prefix(3))")

        let exported = try exportTokens(store: url)
        #expect(exported.count == 300)
        #expect(Set(exported.compactMap { $0["externalPurchaseId"] as? String }) == Set(ids))
        var wrongHits: [String] = []
        for token in exported {
            let id = token["externalPurchaseId"] as? String ?? ""
            let hits = (token["hits"] as? NSNumber)?.intValue ?? -1
            if hits != redirects[id] { wrongHits.append("\(id): \(hits) hits, \(redirects[id] ?? 0) redirects") }
            let destination = token["destination"] as? String ?? ""
            #expect(locations[id]?.first?.hasPrefix(destination + "?") == true, "the export's destination is the one redirected to")
        }
        #expect(wrongHits.isEmpty, "\(wrongHits.count) ids with wrong hits: \(wrongHits.prefix(5))")
        #expect(exported.reduce(0) { $0 + ((($1["hits"] as? NSNumber)?.intValue) ?? 0) } == requests.count)
    }

    /// kill -9 of one of two instances under load: every id that got a 302 from either is in PostgreSQL,
    /// and the killed instance serves again after a restart.
    @Test func killNineOfAnInstanceUnderLoadLosesNoRedirectedToken() throws {
        let folder = TemporaryFolder()
        let (url, config) = try database(folder)
        let victim = try GatewayProcess(config: config, store: url)
        let survivor = try GatewayProcess(config: config, store: url)

        let redirected = LockedList()
        let redirectedByVictim = LockedList()
        let stop = LockedFlag()
        let group = DispatchGroup()
        for worker in 0..<8 {
            let onVictim = worker % 2 == 0
            let port = onVictim ? victim.port : survivor.port
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                guard let connection = try? HTTPConnection(port: port, timeoutSeconds: 5) else { return }
                while !stop.isSet {
                    let id = UUID().uuidString.lowercased()
                    do {
                        let response = try connection.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id)))
                        if response.status == 302 {
                            redirected.append(id)
                            if onVictim { redirectedByVictim.append(id) }
                        }
                    } catch {
                        // The instance died under us: what was in flight got no 302, so it is owed nothing.
                        break
                    }
                }
            }
        }
        let deadline = Date().addingTimeInterval(15)
        while redirectedByVictim.count < 500, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        victim.crash()
        // The survivor keeps serving a moment after the crash.
        Thread.sleep(forTimeInterval: 0.3)
        stop.set()
        group.wait()
        #expect(redirectedByVictim.count > 100, "the load produced redirects on the killed instance before the kill")

        let restarted = try GatewayProcess(config: config, store: url)
        #expect(try restarted.get("/readyz").status == 200)
        let after = UUID().uuidString.lowercased()
        #expect(try restarted.get(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: after))).status == 302)
        #expect(restarted.stop() == 0)
        #expect(survivor.stop() == 0)

        let stored = Set(try exportTokens(store: url).compactMap { $0["externalPurchaseId"] as? String })
        let ids = redirected.snapshot + [after]
        let missing = ids.filter { !stored.contains($0) }
        #expect(missing.isEmpty, "\(missing.count) of \(ids.count) redirected tokens were lost")
    }
}

private final class Outcomes: @unchecked Sendable {
    struct Outcome {
        var id: String
        var instance: Int
        var status: Int
        var location: String?
    }

    private let lock = NSLock()
    private var items: [Outcome] = []

    func add(id: String, instance: Int, status: Int, location: String?) {
        lock.lock()
        items.append(Outcome(id: id, instance: instance, status: status, location: location))
        lock.unlock()
    }

    var all: [Outcome] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}
