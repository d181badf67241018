import Foundation
import LinkOutTestSupport
import Testing

/// The access log: JSON lines written off the loop threads, never the raw token, client truncated.
@Suite struct AccessLogTests {
    @Test func oneJSONLinePerRequestWithoutTheToken() throws {
        let server = try GatewayProcess.start()
        let id = UUID().uuidString.lowercased()
        let token = TokenBuilder.minted(id: id)
        #expect(try server.get(TokenBuilder.linkOut("/fr", token: token)).status == 302)
        #expect(try server.get("/fr?bundleId=com.example").status == 400)
        #expect(try server.get(TokenBuilder.linkOut("/fr", token: TokenBuilder.minted(appAppleId: 7))).status == 400)
        #expect(try server.get("/secret-path?externalPurchaseToken=\(token)").status == 404)
        #expect(try fetch(port: server.port, "HEAD", TokenBuilder.linkOut("/fr", token: token)).status == 302)
        #expect(try server.get("/healthz").status == 200)

        let lines = server.accessLog(atLeast: 6)
        #expect(lines.count == 6)
        let text = try String(contentsOfFile: server.accessLogPath, encoding: .utf8)
        #expect(!text.contains(token), "the raw token is never logged")
        #expect(!text.contains("secret-path"), "nor a raw path")

        let redirect = try #require(lines.first { $0["status"] as? Int == 302 && $0["method"] as? String == "GET" })
        #expect(redirect["route"] as? String == "fr")
        #expect(redirect["externalPurchaseId"] as? String == id)
        #expect(redirect["destination"] as? String == "https://checkout.example.com/fr")
        #expect(redirect["client"] as? String == "127.0.0.0", "IPv4 kept to its /24 by default")
        // Arrival to reply, commit included: at least the time of an fsync, well under the test's patience.
        let duration = try #require(redirect["durationUs"] as? Int)
        #expect(duration > 0 && duration < 5_000_000)
        #expect(redirect["label"] as? String == "linkout.access")
        #expect(redirect["time"] is String)

        #expect(lines.contains { $0["status"] as? Int == 400 && $0["reason"] as? String == "missing_token" })
        #expect(lines.contains { $0["status"] as? Int == 400 && $0["reason"] as? String == "app_apple_id_mismatch:appAppleId" })
        #expect(lines.contains { $0["status"] as? Int == 404 && $0["route"] as? String == "not_found" })
        #expect(lines.contains { $0["method"] as? String == "HEAD" && $0["status"] as? Int == 302 && $0["kind"] as? String == "head" })
        #expect(redirect["kind"] == nil, "a shopper's visit carries no kind")
        #expect(lines.contains { $0["route"] as? String == "healthz" })
    }

    @Test func operatorLogsCanBeJSONToo() throws {
        let server = try GatewayProcess.start(extraArguments: ["--log-format", "json"])
        #expect(server.stop() == 0)
        let lines = server.log.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] is String, "\(line)")
            #expect(object?["message"] is String, "\(line)")
        }
        #expect(server.log.contains(#""message":"draining""#))
    }
}
