import Foundation
import Glibc
import LinkOutTestSupport
import Testing

/// The checkout's API under more than a checkout sends, against the real binary: many posts at once are
/// each answered, 200 or 503 with Retry-After, none lost and none applied twice; a key over its rate gets
/// 429; a bad key is refused and logged once a minute per client, not once a request.
@Suite(.serialized) struct APIAbuseTests {
    typealias Body = [String: Any]

    /// A request for `id`'s line `lineId`, as raw bytes.
    func request(_ fixture: ReportingFixture, id: String, lineId: String, key: String? = nil) throws -> [UInt8] {
        let data = try JSONSerialization.data(withJSONObject: ["externalPurchaseId": id, "lineItems": [ReportingFixture.buy(lineId)]])
        let head =
            "POST /v1/line-items HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Authorization: Bearer \(key ?? fixture.apiKey)\r\nContent-Length: \(data.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + Array(data)
    }

    /// `line_items` as the store holds them: id -> revision.
    func storedLines(_ fixture: ReportingFixture) throws -> [String: Int] {
        let script = """
            import sqlite3, sys, json
            rows = sqlite3.connect(sys.argv[1]).execute("SELECT line_item_id, revision FROM line_items").fetchall()
            print(json.dumps([[r[0], r[1]] for r in rows]))
            """
        let result = try Command.python(["-c", script, fixture.storePath])
        let rows = (try JSONSerialization.jsonObject(with: result.stdout) as? [[Any]]) ?? []
        var lines: [String: Int] = [:]
        for row in rows {
            guard let id = row.first as? String, let revision = row.last as? Int else { continue }
            #expect(lines[id] == nil, "\(id) stored twice")
            lines[id] = revision
        }
        return lines
    }

    /// Enough descriptors for a thousand connections in this process.
    func raiseOpenFileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = max(limit.rlim_cur, min(limit.rlim_max, 8192))
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Sends every request on a connection of its own, all before reading any answer, then reads them all;
    /// the ids answered 503 (each with Retry-After) are sent again, after a second, until none is.
    func sendAllAtOnce(
        _ fixture: ReportingFixture, _ server: GatewayProcess, _ requests: [(id: String, bytes: [UInt8])]
    ) throws -> (busy: Int, rounds: Int) {
        var pending = requests
        var busy = 0
        var rounds = 0
        while !pending.isEmpty {
            rounds += 1
            #expect(rounds <= 30, "still \(pending.count) answered 503 after 30 rounds")
            if rounds > 30 { break }
            let connections = try pending.map { _ in try HTTPConnection(port: server.apiPort, timeoutSeconds: 60) }
            for (connection, request) in zip(connections, pending) { try connection.sendRaw(request.bytes) }
            var again: [(id: String, bytes: [UInt8])] = []
            for (connection, request) in zip(connections, pending) {
                let answer = try connection.readResponse()
                switch answer.status {
                case 200:
                    #expect(answer.bodyText.contains(#""result":"stored""#), "\(request.id): \(answer.bodyText)")
                case 503:
                    #expect(answer[header: "Retry-After"] == "1")
                    again.append(request)
                default:
                    Issue.record("\(request.id): \(answer.status) \(answer.bodyText)")
                }
            }
            busy += again.count
            pending = again
            if !pending.isEmpty { Thread.sleep(forTimeInterval: 1) }
        }
        return (busy, rounds)
    }

    @Test func aThousandPostsAtOnceAreEachAnsweredAndStoredOnce() throws {
        raiseOpenFileLimit()
        let fixture = try ReportingFixture(apiSettings: #""rateLimit": { "requestsPerSecond": 100000 },"#)
        let server = try fixture.serve(reporting: false)
        let tokens = try (0..<10).map { _ in try fixture.linkOut(server, ageDays: 0) }
        let requests = try (0..<1000).map { index in
            let id = "line-\(index)"
            return (id: id, bytes: try request(fixture, id: tokens[index % tokens.count], lineId: id))
        }
        let (busy, rounds) = try sendAllAtOnce(fixture, server, requests)
        let metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
        #expect(metrics.contains(#"linkout_api_requests_total{status="200"} 1000"#), "\(metrics)")
        #expect(metrics.contains(#"linkout_api_requests_total{status="503"} \#(busy)"#) || busy == 0, "\(metrics)")
        #expect(server.stop() == 0)
        let stored = try storedLines(fixture)
        #expect(stored.count == 1000)
        #expect(Set(stored.keys) == Set(requests.map(\.id)))
        #expect(stored.values.allSatisfy { $0 == 1 }, "no line stored twice over: every revision is the first")
        print("1000 posts at once: \(busy) answered 503 first, \(rounds) rounds")
    }

    /// With a queue of four, most of thirty posts at once find it full: they are told so at once, and stored
    /// when sent again.
    @Test func aFullQueueAnswers503AtOnce() throws {
        raiseOpenFileLimit()
        let fixture = try ReportingFixture(apiSettings: #""rateLimit": { "requestsPerSecond": 100000 }, "maxQueued": 4,"#)
        let server = try fixture.serve(reporting: false)
        let token = try fixture.linkOut(server, ageDays: 0)
        let requests = try (0..<30).map { index in (id: "q-\(index)", bytes: try request(fixture, id: token, lineId: "q-\(index)")) }
        let (busy, _) = try sendAllAtOnce(fixture, server, requests)
        #expect(busy > 0, "a queue of four took thirty posts at once")
        #expect(server.stop() == 0)
        #expect(try storedLines(fixture).count == 30)
    }

    @Test func aKeyOverItsRateGets429AndABadKeyIsLoggedOncePerMinutePerClient() throws {
        let fixture = try ReportingFixture(apiSettings: #""rateLimit": { "requestsPerSecond": 0.01, "burst": 2 },"#)
        let server = try fixture.serve(reporting: false)
        let token = try fixture.linkOut(server, ageDays: 0)
        let body: Body = ["externalPurchaseId": token, "lineItems": [ReportingFixture.buy("r-1")]]
        #expect(try fixture.post(server, body).status == 200)
        #expect(try fixture.post(server, body).status == 200)
        let limited = try HTTPConnection(port: server.apiPort)
        try limited.sendRaw(try request(fixture, id: token, lineId: "r-2"))
        let answer = try limited.readResponse()
        #expect(answer.status == 429)
        #expect(answer[header: "Retry-After"] == "1")
        for _ in 0..<20 { #expect(try fixture.post(server, body, authorization: "Bearer not-a-key").status == 401) }
        let metrics = try fetch(port: server.adminPort, "GET", "/metrics").bodyText
        #expect(metrics.contains(#"linkout_api_requests_total{status="401"} 20"#), "\(metrics)")
        #expect(metrics.contains(#"linkout_api_requests_total{status="429"} 1"#), "\(metrics)")
        #expect(server.stop() == 0)
        let badKeyLines = server.log.split(separator: "\n").filter { $0.contains("api: refused a request without a valid key") }
        #expect(badKeyLines.count == 1, "\(badKeyLines)")
        #expect(server.log.split(separator: "\n").filter { $0.contains("api: refused a request over api.rateLimit") }.count == 1)
        #expect(try storedLines(fixture).keys.sorted() == ["r-1"])
    }
}
