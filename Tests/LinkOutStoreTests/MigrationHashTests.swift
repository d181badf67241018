import Testing

@testable import LinkOutStore

/// A released migration step never changes: stores out there ran its SQL as it was, and a later build
/// that ran other SQL for the same version would leave them unlike a new store, which the schema
/// comparison of `MigrationTests` cannot see (it runs today's text both ways). So each step's SQL is
/// pinned here by its hash (FNV-1a, 64 bits, over its UTF-8 bytes: enough to tell an edit, and nothing to
/// depend on). A new step is pinned as it is added; once released, a change is a new step at the end.
@Suite struct MigrationHashTests {
    /// SQLite's steps by the version they bring a store to.
    static let sqlite: [Int: String] = [
        2: "a93e3f98388c13ed",
        3: "db280b4b2c7a37d5",
        4: "452b3611ea841ca4",
        5: "96c1ed7aeed8010e",
        6: "c61d155731984345",
        7: "e534461b49610af9",
        8: "3290ee2d483e23c6",
        9: "df24115f6e72463e",
        10: "cf1325dfecb770bd",
        11: "c2147ccaf71035d0",
        12: "3f58c6de9feb9137",
    ]

    /// SQLite's own step from version 1 (the first release's merged `tokens` table) to 2.
    static let sqliteFromVersionOne = "6cb02e471f55e0fd"

    static let postgres: [Int: String] = [
        1: "619c815a3b2f2a88",
        2: "6064b8ad43f141e4",
        3: "24da4af48c0a75e1",
        4: "dc6f2be6fe5e9120",
        5: "61b6e480b7c1cee3",
        6: "0b43dd7213aa779e",
        7: "e2e567539167791a",
        8: "0b019c0634ef8666",
        9: "419ee74d1eeec7a9",
        10: "6edc5787d0cd013e",
        11: "b469cf777ca78642",
        12: "72d720a81c9d2a86",
    ]

    /// FNV-1a 64 of the text's UTF-8 bytes, in hex.
    static func hash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Every pinned step is there with its SQL unchanged, and every step is pinned.
    static func expectFrozen(_ steps: [Migration], pinned: [Int: String], store: String, sourceLocation: SourceLocation = #_sourceLocation)
    {
        for step in steps {
            let hash = Self.hash(step.sql)
            guard let released = pinned[step.version] else {
                Issue.record(
                    "migration \(step.version) of \(store) has no pinned hash: pin \(step.version): \"\(hash)\" in MigrationHashTests",
                    sourceLocation: sourceLocation)
                continue
            }
            #expect(
                hash == released,
                "released migration \(step.version) of \(store) changed: add a new step instead (its SQL hashes to \(hash), released as \(released))",
                sourceLocation: sourceLocation)
        }
        for version in pinned.keys.sorted() where !steps.contains(where: { $0.version == version }) {
            Issue.record(
                "released migration \(version) of \(store) is gone: stores at every version must still upgrade",
                sourceLocation: sourceLocation)
        }
    }

    @Test func theHashIsFNV1a64() {
        #expect(Self.hash("") == "cbf29ce484222325")
        #expect(Self.hash("a") == "af63dc4c8601ec8c")
        #expect(Self.hash("foobar") == "85944171f73967e8")
    }

    @Test func releasedSQLiteStepsAreUnchanged() {
        Self.expectFrozen(SQLiteMigrations.all, pinned: Self.sqlite, store: "SQLite")
        #expect(
            Self.hash(SQLiteMigrations.fromVersionOne.sql) == Self.sqliteFromVersionOne,
            "released migration 2 (from version 1) of SQLite changed: add a new step instead")
    }

    @Test func releasedPostgresStepsAreUnchanged() {
        Self.expectFrozen(PostgresMigrations.all, pinned: Self.postgres, store: "PostgreSQL")
    }
}
