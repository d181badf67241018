/// Dates in the config: `2026-12-31` (midnight UTC) or `2026-12-31T18:00:00Z`. Parsed here rather than
/// with Foundation, which the core does not import; only UTC is accepted, so a date means one instant
/// on every machine.
public enum UTCDate {
    /// Unix milliseconds, or nil when the text is not one of the two forms or not a real date.
    public static func parse(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10 || (bytes.count == 20 && bytes[10] == UInt8(ascii: "T") && bytes[19] == UInt8(ascii: "Z")) else { return nil }
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
              (1970...9999).contains(year), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        var seconds = daysFromCivil(year: year, month: month, day: day) * 86_400
        if bytes.count == 20 {
            guard bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
                  let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
                  hour < 24, minute < 60, second < 60 else { return nil }
            seconds += hour * 3600 + minute * 60 + second
        }
        return seconds * 1000
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
