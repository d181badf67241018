import Testing

@testable import LinkOutCore

@Suite("BotRules")
struct BotRulesTests {
    typealias F = Fixtures

    /// The rule written the obvious way: a pattern occurs in the User-Agent with A-Z lowered.
    private func naive(_ rules: BotRules, _ userAgent: String) -> Bool {
        let text = userAgent.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        return rules.patterns.contains { pattern in
            text.count >= pattern.count && (0...(text.count - pattern.count)).contains { Array(text[$0..<($0 + pattern.count)]) == pattern }
        }
    }

    @Test("matches exactly the User-Agents the obvious substring search matches, in any case, anywhere")
    func againstNaive() {
        // A two-byte pattern (the config asks for three, the type allows two) too, which the scan's
        // three-byte filter has to let through whatever follows it.
        for extra in [["AcmeMonitor", "x.y"], ["AcmeMonitor", "x.y", "zQ"]] {
            againstNaive(BotRules(extra: extra))
        }
        let twoBytes = BotRules(extra: ["zQ"])
        #expect(twoBytes.isBot("zq") && twoBytes.isBot("aZq") && twoBytes.isBot("Zq/1") && !twoBytes.isBot("z q"))
    }

    private func againstNaive(_ rules: BotRules) {
        var generator = F.SplitMix64(seed: 41)
        // Pieces of patterns (whole, cut short, case mixed) among bytes that are not letters, and Safari's
        // own User-Agent, which matches nothing but starts several candidates.
        let pieces =
            rules.patterns.map { String(decoding: $0, as: UTF8.self) } + [
                "Mozilla/5.0", " ", "é", "/", "Safari", "iPhone", "like", "KHTML",
            ]
        for _ in 0..<3_000 {
            var userAgent = ""
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                var piece = pieces.randomElement(using: &generator)!
                if Bool.random(using: &generator) { piece = String(piece.prefix(Int.random(in: 0...piece.count, using: &generator))) }
                userAgent += String(piece.map { Bool.random(using: &generator) ? Character($0.uppercased()) : $0 })
            }
            #expect(rules.isBot(userAgent) == naive(rules, userAgent), "\(userAgent)")
        }
        let safari =
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
        #expect(!rules.isBot(safari) && !naive(rules, safari))
        #expect(
            rules.isBot("BOT") && rules.isBot("xBoT") && rules.isBot("X.Y") && !rules.isBot("xy") && !rules.isBot("b") && !rules.isBot(""))
    }
}
