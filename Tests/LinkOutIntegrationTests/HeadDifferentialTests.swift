import Foundation
import LinkOutTestSupport
import Testing

/// The real server against h11 (Python's HTTP/1.1 library) as an independent strict parser: every request
/// h11 refuses, from the parser's fuzz seeds and the hostile requests of the robustness suite, is sent to
/// the running gateway with a valid token in place of the placeholder, and must get a 4xx or 5xx answer
/// while nothing is recorded.
@Suite struct HeadDifferentialTests {
    struct Verdict: Decodable {
        var file: String
        var verdict: String
    }

    @Test func whatH11RefusesTheServerRefusesAndRecordsNothing() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("linkout-h11-e2e-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let root = LinkoutBinary.packageRoot.path
        let result = try Command.python([
            root + "/Tests/LinkOutIntegrationTests/Support/differential_h11.py", "--generate", scratch.path,
            root + "/fuzz/corpus/head", scratch.path,
        ])
        try #require(result.status == 0, "differential_h11.py failed (h11: scripts/install-deps): \(result.stderr)")
        let refused = try result.stdout.split(separator: UInt8(ascii: "\n"))
            .map { try JSONDecoder().decode(Verdict.self, from: Data($0)) }
            .filter { $0.verdict == "error" }
        #expect(refused.count > 40, "h11 refuses the hostile heads")

        let server = try GatewayProcess.start()
        let placeholder = Array("externalPurchaseToken=abc".utf8)
        for verdict in refused {
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: verdict.file)))
            // A token that would be recorded if the head were taken.
            if let at = bytes.firstRange(of: placeholder) {
                bytes.replaceSubrange(at, with: Array("externalPurchaseToken=\(TokenBuilder.minted())".utf8))
            }
            let name = URL(fileURLWithPath: verdict.file).lastPathComponent
            let connection = try HTTPConnection(port: server.port)
            try connection.sendRaw(bytes)
            // HEAD's answer has no body to read.
            let response = try connection.readResponse(head: bytes.starts(with: Array("HEAD".utf8)))
            #expect(response.status >= 400 && response.status <= 599, "\(name): \(response.status)")
        }
        #expect(try server.get("/healthz").status == 200)
        #expect(server.stop() == 0)
        #expect(try exportTokens(store: server.storePath).isEmpty, "nothing h11 refuses was recorded")
    }
}
