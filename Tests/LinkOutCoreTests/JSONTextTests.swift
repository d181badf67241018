import Foundation
import LinkOutCore
import Testing

/// `JSONText` writes the access log's and the export's string and number literals by hand: each is checked
/// against Foundation's JSON parser and `String(_:)`, which nobody here wrote.
@Suite struct JSONTextTests {
    /// Strings with every kind of byte the escaper treats apart (quote, backslash, the short-form and the
    /// `\u00XX` control bytes), at the start, the middle and the end of runs, and UTF-8 beyond ASCII.
    static let samples: [String] = [
        "", "plain", "\"", "\\", "a\"b", "\\\\", "end\"", "\"start", "tab\there", "line\nbreak\r\n",
        "\u{0}", "nul\u{0}inside", "\u{1}\u{1F}\u{7F}", "café", "ü\"ü", "日本語\\", "🇳🇱/nl?x=\"1\"",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15",
        String(repeating: "x", count: 300) + "\"" + String(repeating: "y", count: 300),
    ]

    @Test(arguments: samples) func aQuotedStringReadsBackAsItself(_ text: String) throws {
        var bytes: [UInt8] = []
        JSONText.appendQuoted(text, to: &bytes)
        let decoded = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as? String
        #expect(decoded == text)
        #expect(!bytes.contains { $0 < 0x20 }, "no control byte is left as it is")
    }

    /// The exact bytes: the short forms where JSON has them, `\u00XX` for other control bytes, and nothing
    /// else escaped (not `/`, not DEL, not UTF-8 beyond ASCII).
    @Test func theEscapesAreTheShortestJSONHas() {
        let expected: [(String, String)] = [
            ("", #""""#), ("plain", #""plain""#), ("a\"b", #""a\"b""#), ("\\", #""\\""#),
            ("tab\there", #""tab\there""#), ("line\nbreak\r\n", #""line\nbreak\r\n""#),
            ("nul\u{0}inside", #""nul\u0000inside""#), ("\u{1}\u{1F}\u{7F}", "\"\\u0001\\u001f\u{7F}\""),
            ("café/ü", #""café/ü""#), ("end\"", #""end\"""#),
        ]
        for (text, json) in expected {
            var bytes: [UInt8] = []
            JSONText.appendQuoted(text, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == json, "\(Array(text.utf8))")
        }
    }

    @Test func randomStringsReadBackAsThemselves() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1B}", "é", "€", "😀", "/"]
        for _ in 0..<2_000 {
            let text = String((0..<Int.random(in: 0...40, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            var bytes: [UInt8] = []
            JSONText.appendQuoted(text, to: &bytes)
            let decoded = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as? String
            #expect(decoded == text, "\(Array(text.utf8))")
        }
    }

    @Test func decimalsAreWhatStringWrites() {
        var generator = SystemRandomNumberGenerator()
        let edges: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 1_000_000, Int64(Int32.max), Int64.max, Int64.min, Int64.min + 1]
        for value in edges
            + (0..<5_000).map({ _ in Int64.random(in: .min ... .max, using: &generator) >> Int64.random(in: 0...62, using: &generator) })
        {
            var bytes: [UInt8] = [0x41]
            JSONText.appendDecimal(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "A" + String(value))
        }
    }
}
