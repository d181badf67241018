/// Dates in the config: `2026-12-31` (midnight UTC) or `2026-12-31T18:00:00Z`. Parsed here rather than
/// with Foundation, which the core does not import; only UTC is accepted, so a date means one instant
/// on every machine.
public enum UTCDate {
    /// Unix milliseconds, or nil when the text is not one of the two forms or not a real date.
    public static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10 || (bytes.count == 20 && bytes[10] == UInt8(ascii: "T") && bytes[19] == UInt8(ascii: "Z")) else {
            return nil
        }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            (1970...9999).contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var seconds = daysFromCivil(year: year, month: month, day: day) * 86_400
        if bytes.count == 20 {
            guard bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
                hour < 24, minute < 60, second < 60
            else { return nil }
            seconds += hour * 3600 + minute * 60 + second
        }
        return seconds * 1000
    }

    /// A day, `2026-10-01`, as the Unix milliseconds of its midnight UTC; nil for any other form.
    public static func parseDay(_ text: String) -> Int64? {
        text.utf8.count == 10 ? parse(text) : nil
    }

    /// Year, month (1-12) and day of the month of a Unix time in milliseconds, in UTC.
    public static func civil(milliseconds: Int64) -> (year: Int64, month: Int64, day: Int64) {
        civilFromDays(milliseconds.floorDivided(by: 86_400_000).quotient)
    }

    /// Unix milliseconds of a day's midnight UTC; the day may run past its month's end (day 32 of January
    /// is the 1st of February), as `UTCMonth` counts deadlines.
    public static func milliseconds(year: Int64, month: Int64, day: Int64) -> Int64 {
        daysFromCivil(year: year, month: month, day: 1) * 86_400_000 + (day - 1) * 86_400_000
    }

    /// `2026-11-24T09:05:03.042Z`: ISO 8601 in UTC with milliseconds, for log lines. Done here, from the
    /// milliseconds alone, so no C `struct tm` is needed (whose defining module a clean build may resolve
    /// differently) and the format is tested with the parser beside it.
    public static func format(milliseconds: Int64) -> String {
        let (days, inDay) = milliseconds.floorDivided(by: 86_400_000)
        let (year, month, day) = civilFromDays(days)
        let seconds = inDay / 1000
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return
            "\(year < 0 ? "-" : "")\(pad(abs(year), 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):"
            + "\(pad(seconds % 60, 2)).\(pad(inDay % 1000, 3))Z"
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `daysFromCivil` (Howard Hinnant's `civil_from_days`).
    private static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// Quotient rounded down and a remainder that is never negative, for dates before 1970.
    fileprivate func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let remainder = self % divisor
        return remainder < 0 ? (self / divisor - 1, remainder + divisor) : (self / divisor, remainder)
    }
}
