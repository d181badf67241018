import Testing

@testable import LinkOutCore

@Suite("CheckoutQuery")
struct CheckoutQueryTests {
    @Test("pairs joined in the order added, and written into the Location the same as its text")
    func joined() {
        let pairs = [
            ("externalPurchaseId", "3f2504e0-4f89-41d3-9a0c-0305e82c3301"), ("country", "nl"), ("link", "nl"), ("utm_x", "a%20b"),
            ("é", "ü"),
        ]
        for count in 0...pairs.count {
            var query = CheckoutQuery()
            for (name, value) in pairs.prefix(count) { query.add(name, value) }
            let expected = pairs.prefix(count).map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            #expect(query.text == expected && query.count == expected.utf8.count && query.isEmpty == (count == 0))
            for destination in ["https://x.example/p", "https://x.example/p?q=1#top", "https://x.example/p#"] {
                let template = LocationTemplate(destination: destination)
                #expect(template.location(query) == template.location(expected))
            }
        }
    }
}
