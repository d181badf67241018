/// A calendar month in UTC, as reports to Apple are counted: `2026-10` is from 2026-10-01T00:00Z up to (not
/// including) 2026-11-01T00:00Z.
public struct UTCMonth: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int64
    public let month: Int64

    public init(year: Int64, month: Int64) {
        self.year = year
        self.month = month
    }

    /// `YYYY-MM` (a year from 1970 to 9999); nil for anything else.
    public init?(_ text: String) {
        guard text.utf8.count == 7, let start = UTCDate.parseDay(text + "-01") else { return nil }
        let (year, month, _) = UTCDate.civil(milliseconds: start)
        self.init(year: year, month: month)
    }

    /// The month a moment falls in.
    public init(containing milliseconds: Int64) {
        let (year, month, _) = UTCDate.civil(milliseconds: milliseconds)
        self.init(year: year, month: month)
    }

    /// Its first instant, Unix ms.
    public var start: Int64 { UTCDate.milliseconds(year: year, month: month, day: 1) }
    /// The first instant of the next month: the month is `start ..< end`.
    public var end: Int64 { next.start }
    /// From the month's first millisecond to the next month's first.
    public var milliseconds: Range<Int64> { start..<end }
    public var next: UTCMonth { month == 12 ? UTCMonth(year: year + 1, month: 1) : UTCMonth(year: year, month: month + 1) }
    public var previous: UTCMonth { month == 1 ? UTCMonth(year: year - 1, month: 12) : UTCMonth(year: year, month: month - 1) }

    /// Midnight UTC of day `day` of this month.
    public func day(_ day: Int64) -> Int64 { UTCDate.milliseconds(year: year, month: month, day: day) }

    public var description: String {
        let text = String(month)
        return "\(year)-\(text.count == 1 ? "0" : "")\(text)"
    }

    public static func < (a: UTCMonth, b: UTCMonth) -> Bool { (a.year, a.month) < (b.year, b.month) }
}
