import LinkOutCore
import Testing

/// A text log record is one physical line, whatever its message holds.
@Suite struct LogLineTextTests {
    @Test func lineBreaksAndControlCharactersAreEscaped() {
        // libpq's own wording, newlines and tab as it sends them.
        let libpq =
            "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n"
        #expect(
            LogLineText.oneLine(libpq) == #"connection to server at "127.0.0.1", port 1 failed: Connection refused\n"# + "\t"
                + #"Is the server running on that host and accepting TCP/IP connections?\n"#)
        #expect(LogLineText.oneLine("a\r\nb") == #"a\r\nb"#)
        #expect(LogLineText.oneLine("bell\u{07} esc\u{1B}[31m del\u{7F}") == #"bell\u{7} esc\u{1B}[31m del\u{7F}"#)
    }

    @Test func everythingElseIsKeptAsItIs() {
        for text in ["", "plain", "tab\there", #"back\slash"#, "naïve ünïcode, 日本, 👍", "\u{2028}"] {
            #expect(LogLineText.oneLine(text) == text)
        }
    }
}
