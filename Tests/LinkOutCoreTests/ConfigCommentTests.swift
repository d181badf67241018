import Testing

@testable import LinkOutCore

@Suite("comments in the config")
struct ConfigCommentTests {
    @Test func lineCommentsAreWhitespaceOutsideStrings() throws {
        let json = """
            // The shop's gateway.
            {
              "apps": [{ "bundleId": "com.example", "appAppleId": 1234567890 }], // the app of Apple's docs
              // One link.
              "links": [{ "id": "nl", "path": "/nl", "country": "nl",
                          "destinations": [{ "url": "https://checkout.example.com/nl//x" }] }]
            }
            // end
            """
        let config = try ConfigLoader.load(json: Array(json.utf8), baseDirectory: "/").get()
        #expect(
            config.links.first?.destinations.first?.url == "https://checkout.example.com/nl//x", "'//' inside a string is not a comment")
    }

    @Test func tokensAllowNoComments() {
        let json =
            #"{"appAppleId":1,"bundleId":"a", // x"# + "\n"
            + #""tokenCreationDate":1,"externalPurchaseId":"00000000-0000-0000-0000-000000000000"}"#
        #expect(TokenDecoder.decodeJSON(Array(json.utf8)) == .failure(TokenRejection(.tokenNotJSON)))
    }

    @Test func aSingleSlashIsStillAnError() {
        guard case .failure(let error) = ConfigLoader.load(json: Array("/ {}".utf8), baseDirectory: "/") else {
            Issue.record("accepted a lone slash")
            return
        }
        #expect(error.problems.first?.rule.contains("invalid JSON") == true)
    }
}
