/// The `Date` field's IMF-fixdate (RFC 9110 §5.6.7), `Sun, 06 Nov 1994 08:49:37 GMT`: made once a second
/// per loop, not per answer.
public enum HTTPDate {
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func format(secondsSinceEpoch seconds: Int64) -> [UInt8] {
        // UTCDate's ISO 8601 text holds the civil date; the weekday comes from the day count (1970-01-01 was
        // a Thursday).
        let iso = Array(UTCDate.format(milliseconds: seconds * 1000).utf8)  // 1994-11-06T08:49:37.000Z
        let dayNumber = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let weekday = Int(((dayNumber % 7) + 7) % 7)
        let month = Int(iso[5] - 0x30) * 10 + Int(iso[6] - 0x30)
        var text = Array(days[weekday].utf8)
        text += [0x2C, 0x20, iso[8], iso[9], 0x20]
        text += Array(months[max(0, min(11, month - 1))].utf8)
        text.append(0x20)
        text += iso[0..<4]
        text.append(0x20)
        text += iso[11..<19]
        text += Array(" GMT".utf8)
        return text
    }
}
