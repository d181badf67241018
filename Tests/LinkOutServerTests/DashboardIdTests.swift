import Testing

@testable import LinkOutServer

/// How the dashboard cuts ids it shows (`full=1` gives them whole).
@Suite struct DashboardIdTests {
    @Test func idsAreCutToEightCharactersAfterASandboxPrefix() {
        #expect(Dashboard.truncated("d1b2c3d4-0000-4000-8000-00000000abcd") == "d1b2c3d4…")
        // `SANDBOX_` is itself 8 characters: cut there, every sandbox id looked the same.
        #expect(Dashboard.truncated("SANDBOX_d1b2c3d4-0000-4000-8000-00000000abcd") == "SANDBOX_d1b2c3d4…")
        #expect(Dashboard.truncated("SANDBOX_abc") == "SANDBOX_abc")
        #expect(Dashboard.truncated("12345678") == "12345678")
        #expect(Dashboard.truncated("123456789") == "12345678…")
    }
}
