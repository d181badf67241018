import Testing

@testable import LinkOutCore

@Suite("LocationTemplate")
struct LocationTemplateTests {
    static let id = (name: "externalPurchaseId", value: "3f2504e0-4f89-41d3-9a0c-0305e82c3301")
    static let token = (name: "externalPurchaseToken", value: "eyJhIjoxfQ")

    private func location(_ destination: String, _ parameters: [(name: String, value: String)] = [id]) -> String {
        LocationTemplate(destination: destination).location(parameters.map { "\($0.name)=\($0.value)" }.joined(separator: "&"))
    }

    @Test("a destination without a query gets '?'")
    func question() {
        #expect(
            location("https://checkout.example.com/nl")
                == "https://checkout.example.com/nl?externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        #expect(
            location("https://checkout.example.com")
                == "https://checkout.example.com?externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        #expect(
            location("https://checkout.example.com/")
                == "https://checkout.example.com/?externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301")
    }

    @Test("a destination with a query gets '&'")
    func ampersand() {
        #expect(
            location("https://checkout.example.com/de?plan=annual")
                == "https://checkout.example.com/de?plan=annual&externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        #expect(
            location("https://checkout.example.com/de?a=1&b=2")
                == "https://checkout.example.com/de?a=1&b=2&externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301")
    }

    @Test("several parameters are joined with '&'")
    func severalParameters() {
        #expect(
            location("https://x.example/p", [Self.id, Self.token])
                == "https://x.example/p?externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301&externalPurchaseToken=eyJhIjoxfQ")
        #expect(
            location("https://x.example/p?q=1", [Self.id, Self.token])
                == "https://x.example/p?q=1&externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301&externalPurchaseToken=eyJhIjoxfQ")
    }

    @Test("a fragment stays at the end")
    func fragment() {
        #expect(
            location("https://x.example/p#top")
                == "https://x.example/p?externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301#top")
        #expect(
            location("https://x.example/p?q=1#top", [Self.id, Self.token])
                == "https://x.example/p?q=1&externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301&externalPurchaseToken=eyJhIjoxfQ#top")
        #expect(
            location("https://x.example/p#")
                == "https://x.example/p?externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301#")
    }

    @Test("a '?' inside the fragment is not the query")
    func questionInFragment() {
        #expect(
            location("https://x.example/p#a?b=1")
                == "https://x.example/p?externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301#a?b=1")
    }

    @Test("a destination ending in '?' or '&' gets no extra separator")
    func trailingSeparator() {
        #expect(location("https://x.example/p?") == "https://x.example/p?externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        #expect(location("https://x.example/p?a=1&") == "https://x.example/p?a=1&externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        #expect(
            location("https://x.example/p?", [Self.id, Self.token])
                == "https://x.example/p?externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301&externalPurchaseToken=eyJhIjoxfQ")
        #expect(
            location("https://x.example/p?#frag")
                == "https://x.example/p?externalPurchaseId=3f2504e0-4f89-41d3-9a0c-0305e82c3301#frag")
    }

    @Test("no parameters: the destination unchanged")
    func noParameters() {
        #expect(location("https://x.example/p?q#f", []) == "https://x.example/p?q#f")
        #expect(location("https://x.example/p?", []) == "https://x.example/p?")
    }

    @Test("the scheme, host and path are the destination's, byte for byte")
    func prefixIsDestination() {
        for destination in ["https://x.example/p", "https://x.example:8443/a/b?c=d", "https://[::1]/x#y"] {
            let result = location(destination, [Self.id, Self.token])
            let base = destination.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            #expect(result.hasPrefix(String(base)))
        }
    }
}
