import Foundation
import LinkOutTestSupport
import Testing

/// The weighted split and its stickiness, through the real server.
@Suite struct DestinationTests {
    static let links = """
        [{ "id": "split", "path": "/nl", "country": "nl",
           "destinations": [{ "url": "https://a.example.com/", "weight": 3 }, { "url": "https://b.example.com/", "weight": 1 }] }]
        """

    @Test func weightedSplitFollowsWeightsAndSticksAcrossRestart() throws {
        let folder = TemporaryFolder()
        let config = folder.write("config.json", TestConfig.json(links: Self.links))
        let store = folder.file("store.sqlite")
        let ids = (0..<2000).map { _ in UUID().uuidString.lowercased() }
        var firstRun: [String: String] = [:]

        do {
            let server = try GatewayProcess(config: config, store: store)
            let connection = try HTTPConnection(port: server.port)
            for id in ids {
                let response = try connection.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id)))
                #expect(response.status == 302)
                firstRun[id] = response[header: "Location"]
            }
            #expect(server.stop() == 0)
        }
        let toA = firstRun.values.filter { $0.hasPrefix("https://a.example.com/") }.count
        let share = Double(toA) / Double(ids.count)
        // 3:1 means 75 %; with 2000 tokens the standard deviation is under 1 point.
        #expect(abs(share - 0.75) < 0.04, "share to the weight-3 destination was \(share)")

        // After a restart (and on any other instance) every token lands where it did.
        let server = try GatewayProcess(config: config, store: store)
        let connection = try HTTPConnection(port: server.port)
        for id in ids.prefix(300) {
            let response = try connection.request("GET", TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id)))
            #expect(response[header: "Location"] == firstRun[id])
        }
        let exported = try exportTokens(store: store)
        #expect(exported.count == ids.count)
        #expect(exported.filter { $0["hits"] as? Int == 2 }.count == 300)
        // The record's destination is the one the shopper was sent to.
        for record in exported.prefix(100) {
            let id = record["externalPurchaseId"] as! String
            #expect(firstRun[id] == "\(record["destination"] as! String)?externalPurchaseId=\(id)")
        }
    }
}
