import CSQLite
import Foundation

/// The connection the reporting SQL runs on, SQLite's or PostgreSQL's: the statements are written once,
/// with `?1`, `?2` … for parameters, and each database binds them its own way. Where the two differ
/// (row locks, which only PostgreSQL's several instances need), the store asks `isPostgres`.
protocol ReportingDatabase: AnyObject {
    var isPostgres: Bool { get }
    /// Runs `body` in one transaction, committed if it returns, rolled back if it throws.
    func transaction<Result>(_ body: () throws -> Result) throws -> Result
    /// Runs `sql` with `values` bound in order and calls `row` for each row of its result.
    func query(_ sql: String, _ values: [SQLValue], row: (any SQLRow) throws -> Void) throws
}

extension ReportingDatabase {
    func query(_ sql: String, _ values: [SQLValue] = []) throws {
        try query(sql, values) { _ in }
    }

    /// `FOR UPDATE SKIP LOCKED` on PostgreSQL, where several instances share the rows; nothing on SQLite,
    /// whose write transactions already exclude each other.
    var skipLocked: String { isPostgres ? "FOR UPDATE SKIP LOCKED" : "" }
    /// `FOR UPDATE` on PostgreSQL: wait for the row, then hold it until the transaction ends.
    var forUpdate: String { isPostgres ? "FOR UPDATE" : "" }
}

/// A PostgreSQL connection made on first use rather than at start, for a store opened while the server
/// was down (`SQLReportingStore.connectingWhenReachable`): every call tries to connect until one succeeds
/// (failing as a broken connection does meanwhile), checks the schema then, and from there on is the
/// connection, which reconnects by itself as any other does.
final class DeferredPostgresConnection: ReportingDatabase {
    private let url: String
    private let timeoutMs: Int?
    private var connection: PostgresConnection?

    init(url: String, timeoutMs: Int?) {
        self.url = url
        self.timeoutMs = timeoutMs
    }

    var isPostgres: Bool { true }

    private func connected() throws -> PostgresConnection {
        if let connection { return connection }
        let made = try PostgresConnection(url: url, timeoutMs: timeoutMs)
        try PostgresMigrations.checkVersion(made)
        connection = made
        return made
    }

    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try connected().transaction(body)
    }

    func query(_ sql: String, _ values: [SQLValue], row: (any SQLRow) throws -> Void) throws {
        try connected().query(sql, values, row: row)
    }
}

/// A value bound to a statement's parameter; nil binds NULL.
enum SQLValue {
    case text(String?)
    case integer(Int64?)
}

/// One row of a result, read by column index (0-based) in the order the SELECT names them.
protocol SQLRow {
    func text(_ column: Int) throws -> String
    func optionalText(_ column: Int) throws -> String?
    func int64(_ column: Int) throws -> Int64
    func optionalInt64(_ column: Int) throws -> Int64?
    func bool(_ column: Int) throws -> Bool
}

// MARK: - SQLite

extension SQLiteConnection: ReportingDatabase {
    var isPostgres: Bool { false }

    /// `BEGIN IMMEDIATE`: the write lock is taken at the start, so a read-then-write cannot be overtaken
    /// by another connection. On an error the transaction is rolled back, unless SQLite already did so
    /// itself (as it does after some I/O and full-disk errors, which a second ROLLBACK would only answer
    /// with another error).
    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { try? execute("ROLLBACK") }
            throw error
        }
    }

    func query(_ sql: String, _ values: [SQLValue], row: (any SQLRow) throws -> Void) throws {
        try withCachedStatement(sql) { statement in
            for (index, value) in values.enumerated() {
                switch value {
                case .text(let text): statement.bind(Int32(index + 1), text)
                case .integer(let number): statement.bind(Int32(index + 1), number)
                }
            }
            while try statement.step() { try row(statement) }
        }
    }
}

extension SQLiteStatement: SQLRow {
    func text(_ column: Int) -> String { text(Int32(column)) }
    func optionalText(_ column: Int) -> String? { optionalText(Int32(column)) }
    func int64(_ column: Int) -> Int64 { int64(Int32(column)) }
    func optionalInt64(_ column: Int) -> Int64? { optionalInt64(Int32(column)) }
    /// SQLite has no boolean type: 0 is false.
    func bool(_ column: Int) -> Bool { int64(Int32(column)) != 0 }
}

// MARK: - PostgreSQL

extension PostgresConnection: ReportingDatabase {
    var isPostgres: Bool { true }

    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try transaction(begin: "BEGIN", body)
    }

    /// Every transaction linkout runs on PostgreSQL goes through here (`begin` names its isolation), so none
    /// is left open on an error: rolled back if the server still has it open, as after a failed statement.
    func transaction<Result>(begin: String, _ body: () throws -> Result) throws -> Result {
        try ensureConnected()
        try execute(begin)
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if inTransaction { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// `?N` becomes `$N` with the value's type spelt out (`$N::bigint`, `$N::text`): libpq sends text
    /// parameters, and PostgreSQL cannot infer a type for `$1 + $2`.
    func query(_ sql: String, _ values: [SQLValue], row: (any SQLRow) throws -> Void) throws {
        let result = try execute(
            Self.numbered(sql, values),
            parameters: values.map { value in
                switch value {
                case .text(let text): text
                case .integer(let number): number.map(String.init)
                }
            })
        for index in 0..<result.rowCount { try row(PostgresRow(result: result, row: index)) }
    }

    static func numbered(_ sql: String, _ values: [SQLValue]) -> String {
        var out = ""
        var rest = Substring(sql)
        while let mark = rest.firstIndex(of: "?") {
            out += rest[..<mark]
            let digits = rest[rest.index(after: mark)...].prefix { $0.isNumber }
            guard let number = Int(digits), (1...values.count).contains(number) else {
                out += "?"
                rest = rest[rest.index(after: mark)...]
                continue
            }
            switch values[number - 1] {
            case .text: out += "$\(number)::text"
            case .integer: out += "$\(number)::bigint"
            }
            rest = rest[digits.endIndex...]
        }
        return out + rest
    }
}

struct PostgresRow: SQLRow {
    let result: PostgresResult
    let row: Int
    func text(_ column: Int) -> String { result.text(row, column) }
    func optionalText(_ column: Int) -> String? { result.optionalText(row, column) }
    func int64(_ column: Int) throws -> Int64 { try result.int64(row, column) }
    func optionalInt64(_ column: Int) throws -> Int64? { try result.optionalInt64(row, column) }
    func bool(_ column: Int) -> Bool { result.bool(row, column) }
}
