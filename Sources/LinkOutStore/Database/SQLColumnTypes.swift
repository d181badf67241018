/// The types of the tables both stores keep with the same columns (the dashboard's counts, the purchases'
/// tally): SQLite's, or PostgreSQL's with byte-order text (ids and names are compared as bytes, the same on
/// every server), and how the table's definition ends (SQLite keeps these small-keyed tables clustered on
/// their key, `WITHOUT ROWID`).
struct SQLColumnTypes {
    let integer: String
    let text: String
    let tableEnd: String

    init(postgres: Bool) {
        integer = postgres ? "BIGINT" : "INTEGER"
        text = postgres ? #"TEXT COLLATE "C""# : "TEXT"
        tableEnd = postgres ? ")" : ") WITHOUT ROWID"
    }
}
