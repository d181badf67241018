import Foundation
import LinkOutCore
import Testing

@Suite struct UTCDateTests {
    @Test("format writes ISO 8601 with milliseconds, as Foundation's formatter does")
    func formatMatchesFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        // Fixed edges (epoch, a leap day, a century, the last millisecond of a year), then random instants.
        var samples: [Int64] = [0, 1, 999, 951_782_400_000, 4_107_542_399_999, 1_706_169_600_000, 253_402_300_799_999]
        for _ in 0..<2000 { samples.append(Int64.random(in: 0..<253_402_300_800_000, using: &generator)) }
        for ms in samples {
            let expected = formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000 + 0.0000001))
            #expect(UTCDate.format(milliseconds: ms) == expected, "\(ms)")
        }
    }

    @Test("format and parse agree on whole seconds")
    func roundTrip() throws {
        for text in ["1970-01-01T00:00:00Z", "2024-02-29T23:59:59Z", "2100-03-01T12:00:00Z"] {
            let ms = try #require(UTCDate.parse(text))
            #expect(UTCDate.format(milliseconds: ms) == text.dropLast() + ".000Z")
        }
    }

    @Test("instants before 1970 and before year 0 keep their sign and four digits")
    func earlyInstants() {
        #expect(UTCDate.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(UTCDate.format(milliseconds: -62_167_219_200_000) == "0000-01-01T00:00:00.000Z")
        #expect(UTCDate.format(milliseconds: -62_167_219_200_001) == "-0001-12-31T23:59:59.999Z")
    }
}
