import LinkOutCore
import Testing

@Suite struct StoreLocationTests {
    @Test func postgresURLsSelectPostgresAndEverythingElseIsAPath() {
        #expect(StoreLocation("postgres://linkout@db/linkout") == .postgres(url: "postgres://linkout@db/linkout"))
        #expect(StoreLocation("postgresql://db/linkout") == .postgres(url: "postgresql://db/linkout"))
        #expect(StoreLocation("POSTGRES://db/x") == .sqlite(path: "POSTGRES://db/x"), "libpq knows only the lowercase schemes")
        #expect(StoreLocation("data/linkout.sqlite") == .sqlite(path: "data/linkout.sqlite"))
        #expect(StoreLocation("/var/lib/postgres/x.sqlite") == .sqlite(path: "/var/lib/postgres/x.sqlite"))
        #expect(StoreLocation("postgres:db") == .sqlite(path: "postgres:db"))
    }

    @Test func passwordsAreRedacted() {
        let cases: [(String, String)] = [
            ("postgres://linkout:s3cr%40t@db.internal:5432/linkout", "postgres://linkout:***@db.internal:5432/linkout"),
            ("postgres://linkout@db.internal/linkout", "postgres://linkout@db.internal/linkout"),
            (
                "postgres://db.internal/linkout?sslmode=require&password=x&user=a",
                "postgres://db.internal/linkout?sslmode=require&password=***&user=a"
            ),
            ("postgresql://u:p@[::1]:5432", "postgresql://u:***@[::1]:5432"),
            ("postgres://u:p@ss@host/db", "postgres://u:***@host/db"),
            ("postgres://u:pa/ss@host/db", "postgres://u:***@host/db"),
            ("postgres://host:5432/db", "postgres://host:5432/db"),
        ]
        for (url, shown) in cases {
            #expect(StoreLocation(url).redacted == shown)
        }
        #expect(StoreLocation("data/x.sqlite").redacted == "data/x.sqlite")
    }

    @Test func aURLInTheConfigIsNotTakenForARelativePath() throws {
        let json =
            #"{ "store": "postgres://linkout@db.internal:5432/linkout", "apps": [{ "bundleId": "com.example", "appAppleId": 1 }], "links": [{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example/" }] }] }"#
        let config = try ConfigLoader.load(json: Array(json.utf8), baseDirectory: "/etc/linkout").get()
        #expect(config.storePath == "postgres://linkout@db.internal:5432/linkout")
    }
}
