/// Text made safe for a line-based log: a record must be one physical line, or `grep`, journald and
/// line-based alerting see a libpq error's second and third lines as records of their own, without the
/// level or the label that an alert matches on.
public enum LogLineText {
    /// `text` with line feeds and carriage returns as `\n` and `\r`, and the other control characters
    /// (tab excepted, it ends no line) as `\u{XX}`; everything else as it is. A backslash is not escaped:
    /// the text log is for people and line-based tools, and the JSON log (`--log-format json`) keeps the
    /// exact text.
    public static func oneLine(_ text: String) -> String {
        // Nearly every message has no control character: it is returned as it is, unscanned twice.
        guard text.utf8.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }) else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out.unicodeScalars.append(scalar)
            case 0..<0x20, 0x7F: out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
