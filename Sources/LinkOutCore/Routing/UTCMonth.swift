/// A calendar month in UTC, `2026-05`, as `report verify --month` names one: the Unix milliseconds from its
/// first instant up to (not including) the next month's.
public struct UTCMonth: Sendable, Equatable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    /// From the month's first millisecond to the next month's first.
    public let milliseconds: Range<Int64>

    /// nil unless `text` is `YYYY-MM` with a month from 01 to 12 and a year from 1970 to 9999.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let year = Int(parts[0]), let month = Int(parts[1]), (1...12).contains(month),
              let start = UTCDate.parse("\(parts[0])-\(parts[1])-01") else { return nil }
        let next = month == 12 ? "\(Self.fourDigits(year + 1))-01-01" : "\(parts[0])-\(month + 1 < 10 ? "0" : "")\(month + 1)-01"
        guard let end = UTCDate.parse(next) else { return nil }
        self.year = year
        self.month = month
        milliseconds = start..<end
    }

    private static func fourDigits(_ year: Int) -> String {
        let digits = String(year)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    public var description: String { "\(Self.fourDigits(year))-\(month < 10 ? "0" : "")\(month)" }
}
