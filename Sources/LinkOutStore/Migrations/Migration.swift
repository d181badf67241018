/// One step of a store's schema, in the ordered lists of `SQLiteMigrations` and `PostgresMigrations`: the
/// version it brings the store to, what it adds (named for the upgrade tests and the operator's output), and
/// its SQL.
struct Migration {
    var version: Int
    var summary: String
    var sql: String
}
