import Foundation
import Testing

@testable import LinkOutCore

@Suite("TokenBase64")
struct TokenBase64Tests {
    private func decode(_ text: String) -> [UInt8]? { TokenBase64.decode(text.bytes) }

    @Test("padded and unpadded forms decode to the same bytes")
    func paddedAndUnpadded() {
        #expect(decode("QQ==") == "A".bytes)
        #expect(decode("QQ") == "A".bytes)
        #expect(decode("QUI=") == "AB".bytes)
        #expect(decode("QUI") == "AB".bytes)
        #expect(decode("QUJD") == "ABC".bytes)
        #expect(decode("QUJDRA==") == "ABCD".bytes)
        #expect(decode("QUJDRA") == "ABCD".bytes)
        #expect(decode("") == [])
    }

    @Test("URL-safe and standard alphabets both decode")
    func bothAlphabets() {
        // 0xFB 0xFF 0xBF is all 62s and 63s: "+/+/" standard, "-_-_" URL-safe.
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Fixtures.standardBase64(bytes) == "+/+/")
        #expect(decode("+/+/") == bytes)
        #expect(decode("-_-_") == bytes)
        #expect(TokenBase64.encodeURLSafe(bytes) == "-_-_")
    }

    @Test("a space counts as '+' (form-decoded query)")
    func spaceForPlus() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(decode(" / /") == bytes)
        #expect(decode(" _ _") == bytes)
        #expect(decode("   _") == [0xFB, 0xEF, 0xBF])
    }

    @Test("alphabets may be mixed within one string")
    func mixedAlphabets() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(decode("-/+_") == bytes)
        #expect(decode("+_ /") == bytes)
        #expect(decode("-/-/") == bytes)
    }

    @Test(
        "invalid characters are refused",
        arguments: [
            "QU*D", "QUJ!", "QU.D", "QU\tD", "QU\nD", "QU\rD", "QUJD\u{00E9}", "QU%D", "QU:D", "QUJ\u{0}",
        ])
    func invalidCharacters(_ text: String) {
        #expect(decode(text) == nil)
    }

    @Test("'=' anywhere but the end is refused", arguments: ["Q=Q=", "=QQQ", "QU=D", "QQ=A", "QUJD=QUJD", "QQ==" + "QQ=="])
    func equalsInTheMiddle(_ text: String) {
        #expect(decode(text) == nil)
    }

    @Test("a length of 1 mod 4 (after padding) is refused", arguments: ["Q", "QUJDR", "QUJDRUZHS", "Q===", "QUJDR==="])
    func lengthOneModFour(_ text: String) {
        #expect(decode(text) == nil)
    }

    @Test(
        "too much or misplaced padding is refused",
        arguments: ["QQ===", "QUI==", "QUJD=", "QUJD==", "QQ=", "=", "==", "===", "QUJDRA=", "QUJDRA==="])
    func badPadding(_ text: String) {
        #expect(decode(text) == nil)
    }

    @Test("percent escapes are not decoded here: the caller turns %3D into '='")
    func percentIsNotPadding() {
        #expect(decode("QQ%3D%3D") == nil)
    }

    @Test("encodeURLSafe round-trips every length from 0 to 40, and matches Foundation's encoder")
    func roundTrips() {
        var generator = Fixtures.SplitMix64(seed: 0xB64)
        for length in 0...40 {
            for _ in 0..<25 {
                let bytes = Fixtures.randomBytes(length, using: &generator)
                let encoded = TokenBase64.encodeURLSafe(bytes)
                let standard = Fixtures.standardBase64(bytes)
                let expected =
                    standard
                    .replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
                #expect(encoded == expected, "length \(length)")
                #expect(!encoded.contains("="))
                #expect(encoded.utf8.count == (length * 4 + 2) / 3)
                #expect(TokenBase64.decode(encoded.bytes) == bytes, "length \(length)")
                // Foundation's padded standard form, and its form-decoded variant, decode too.
                #expect(TokenBase64.decode(standard.bytes) == bytes, "length \(length)")
                let formDecoded = standard.replacingOccurrences(of: "+", with: " ")
                #expect(TokenBase64.decode(formDecoded.bytes) == bytes, "length \(length)")
            }
        }
    }

    @Test("decode accepts any collection of bytes, including a slice")
    func decodesSlices() {
        let text = Array("xxQUJDyy".utf8)
        #expect(TokenBase64.decode(text[2..<6]) == "ABC".bytes)
    }

    @Test("every byte value survives a round trip")
    func allByteValues() {
        let bytes = (0...255).map { UInt8($0) }
        let encoded = TokenBase64.encodeURLSafe(bytes)
        #expect(TokenBase64.decode(encoded.bytes) == bytes)
        #expect(
            encoded.utf8.allSatisfy { byte in
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            })
    }
}
