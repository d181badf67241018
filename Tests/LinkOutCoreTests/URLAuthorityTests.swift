import Testing

@testable import LinkOutCore

/// The one reader of `scheme://[userinfo@]host[:port]`, as destinations, plist links, health origins and
/// store URLs take it apart.
@Suite("URLAuthority")
struct URLAuthorityTests {
    @Test("the parts, as written")
    func parts() throws {
        let full = try #require(URLAuthority("https://user:pw@Shop.Example:8443/checkout?x=1#top"))
        #expect(full.scheme == "https" && full.userInfo == "user:pw" && full.host == "Shop.Example" && full.port == "8443")
        #expect(full.portNumber == 8443 && full.rest == "/checkout?x=1#top" && full.authority == "user:pw@Shop.Example:8443")
        let ipv6 = try #require(URLAuthority("http://[::1]:80"))
        #expect(ipv6.host == "[::1]" && ipv6.portNumber == 80 && ipv6.rest.isEmpty && ipv6.hasValidHostAndPort)
        #expect(URLAuthority("https://a.example?q")?.host == "a.example")
        #expect(URLAuthority("no-scheme") == nil && URLAuthority("1x://a") == nil)
    }

    @Test(
        "host and port rules",
        arguments: [
            ("https://a.example", true), ("https://a.example:443", true), ("https://[::1]:8443", true), ("https://a.example:+443", false),
            ("https://a.example:0", false), ("https://a.example:65536", false), ("https://[::1", false), ("https://[::1]x", false),
            ("https://.a.example", false), ("https://a..example", false), ("https://a_b.example", false), ("https://", false),
        ])
    func rules(_ url: String, _ valid: Bool) {
        #expect((URLAuthority(url)?.hasValidHostAndPort ?? false) == valid, "\(url)")
    }

    @Test("a store URL's user info runs to the last '@' before the query, past a '/' in the password")
    func acrossDelimiters() throws {
        let parts = try #require(URLAuthority("postgres://me:pa/ss@db:5432/linkout?sslmode=require", userInfoAcrossDelimiters: true))
        #expect(parts.userInfo == "me:pa/ss" && parts.host == "db" && parts.rest == "/linkout?sslmode=require")
        #expect(URLAuthority("postgres://me:pa/ss@db:5432/linkout")?.userInfo == nil, "by RFC 3986 the authority ends at the '/'")
        #expect(
            StoreLocation.redactingPassword("postgres://me:pa/ss@db:5432/linkout?password=x&a=b")
                == "postgres://me:***@db:5432/linkout?password=***&a=b")
    }
}
