import CSQLite

/// A thin owner of one `sqlite3*` and its prepared statements. Not thread-safe: one thread uses it at a
/// time (it may be handed to another thread, as the checkpointer does, hence `@unchecked Sendable`).
final class SQLiteConnection: @unchecked Sendable {
    let handle: OpaquePointer
    let path: String

    /// Turns SQLite's memory statistics off once, before the first connection opens (`csqlite_disable_memory_statistics`).
    private static let configured: Void = { _ = csqlite_disable_memory_statistics() }()

    init(path: String, readOnly: Bool) throws {
        _ = Self.configured
        var db: OpaquePointer?
        let flags =
            readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            if let db { sqlite3_close_v2(db) }
            throw StoreError("opening \(path)", message)
        }
        self.handle = db
        self.path = path
        // Another connection (an export, a checkpoint) may hold a lock for a moment; wait rather than fail.
        sqlite3_busy_timeout(db, 5000)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    var lastError: String { String(cString: sqlite3_errmsg(handle)) }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The row id of the last successful INSERT.
    var lastInsertRowid: Int64 { sqlite3_last_insert_rowid(handle) }

    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? lastError
            sqlite3_free(error)
            throw StoreError("running \(sql.prefix(60))", message)
        }
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw StoreError("preparing \(sql.prefix(60))", lastError)
        }
        return SQLiteStatement(statement, connection: self)
    }

    /// Statements kept by `withCachedStatement`, by SQL text.
    private var cached: [SQLText: SQLiteStatement] = [:]

    /// Runs `body` with a statement for `sql` prepared once and kept: the reporting and dashboard statements
    /// run again and again (the dashboard's bucket upsert once per writer batch), and preparing one costs
    /// more than running it. A statement in use stays in the cache marked busy, so a nested use of the same
    /// text prepares its own; it is reset when `body` ends. At most 64 are kept.
    func withCachedStatement<Result>(_ sql: String, _ body: (SQLiteStatement) throws -> Result) throws -> Result {
        let key = SQLText(sql)
        if let statement = cached[key], !statement.busy {
            statement.busy = true
            defer {
                statement.reset()
                statement.busy = false
            }
            return try body(statement)
        }
        let statement = try prepare(sql)
        defer {
            statement.reset()
            if cached[key] == nil {
                if cached.count >= 64 { cached.removeAll() }
                cached[key] = statement
            }
        }
        return try body(statement)
    }

    /// A statement's text as the cache's key, hashed by its length and last bytes only: the texts kept are
    /// a few shapes of one upsert (a table, a row count), which differ there, and hashing every byte of
    /// texts of several hundred, twice per statement run, was a tenth of the writer's instructions in
    /// strict durability's small batches (callgrind). Equal keys still compare the whole text.
    private struct SQLText: Hashable {
        let text: String

        init(_ text: String) { self.text = text }

        static func == (a: SQLText, b: SQLText) -> Bool { a.text == b.text }

        func hash(into hasher: inout Hasher) {
            let utf8 = text.utf8
            hasher.combine(utf8.count)
            for byte in utf8.suffix(48) { hasher.combine(byte) }
        }
    }

    /// A single integer from a query such as `PRAGMA user_version`.
    func integer(_ sql: String) throws -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { throw StoreError("reading \(sql)", "no row") }
        return statement.int64(0)
    }
}

/// A prepared statement, reset and reused for every row.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private unowned let connection: SQLiteConnection
    /// Running for a `withCachedStatement` body now (so the cache does not hand it out twice).
    fileprivate var busy = false

    init(_ statement: OpaquePointer, connection: SQLiteConnection) {
        self.statement = statement
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(statement)
    }

    func bind(_ index: Int32, _ value: String?) {
        guard var text = value else {
            sqlite3_bind_null(statement, index)
            return
        }
        // The string's own UTF-8 (SQLite copies it): passing a `String` as `const char *` would first copy
        // it into a C string of its own, a malloc per value. An empty buffer may have no address, which
        // SQLite would take for NULL.
        _ = text.withUTF8 { bytes in
            if let base = bytes.baseAddress, !bytes.isEmpty {
                sqlite3_bind_text(
                    statement, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(bytes.count), csqlite_transient())
            } else {
                sqlite3_bind_text(statement, index, "", 0, csqlite_transient())
            }
        }
    }

    /// Binds `value` without SQLite copying it: its UTF-8 goes into `row`, which the caller keeps, unchanged
    /// and not reset, until the statement has been stepped (and rebinds every text parameter before the next
    /// step). A copy into SQLite's own memory is a free and a malloc per value (SQLite releases a
    /// parameter's buffer on every bind), under its global allocation mutex: for the writer, 7 of them per visit.
    func bind(_ index: Int32, _ value: String?, in row: SQLiteRowText) {
        guard let value else {
            sqlite3_bind_null(statement, index)
            return
        }
        let (pointer, count) = row.append(value)
        sqlite3_bind_text(statement, index, pointer, count, csqlite_static())
    }

    func bind(_ index: Int32, _ number: Int64?) {
        guard let number else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_int64(statement, index, number)
    }

    /// Runs a statement that returns no rows.
    func run() throws {
        defer { sqlite3_reset(statement) }
        let status = sqlite3_step(statement)
        guard status == SQLITE_DONE || status == SQLITE_ROW else {
            throw StoreError("writing", connection.lastError)
        }
    }

    /// Steps to the next row; false when there is none.
    func step() throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw StoreError("reading", connection.lastError)
        }
    }

    func reset() {
        sqlite3_reset(statement)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func optionalInt64(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, column)
    }

    /// By the value's length, as `bind` stores it: a NUL inside a value does not end it.
    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : text(column)
    }
}

/// The text of one row's parameters, bound with `SQLiteStatement.bind(_:_:in:)`: one buffer, grown in
/// chunks that stay where they are until `reset`, so a pointer handed to SQLite stays valid until the row is
/// stepped. Reused row after row: no allocation once it has grown to a row's size.
///
/// One thread uses it (the writer's, per row of its batch), so its variables skip the run-time exclusivity
/// checks, which cross-module optimisation left in `append`: 13 % of the writer's instructions (callgrind).
final class SQLiteRowText {
    @exclusivity(unchecked) private var chunks: [(pointer: UnsafeMutableRawPointer, capacity: Int)] = []
    @exclusivity(unchecked) private var current = 0
    @exclusivity(unchecked) private var used = 0

    deinit {
        for chunk in chunks { chunk.pointer.deallocate() }
    }

    /// Forgets the row's text once it has been stepped; the memory is kept for the next.
    func reset() {
        current = 0
        used = 0
    }

    /// `text`'s UTF-8, NUL-terminated, at a place that does not move until `reset`.
    func append(_ text: String) -> (UnsafePointer<CChar>, Int32) {
        var text = text
        return text.withUTF8 { bytes in
            let needed = bytes.count + 1
            if chunks.isEmpty || chunks[current].capacity - used < needed {
                if !chunks.isEmpty { current += 1 }
                used = 0
                if current == chunks.count || chunks[current].capacity < needed {
                    let capacity = max(4096, needed)
                    let chunk = (UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8), capacity)
                    if current == chunks.count {
                        chunks.append(chunk)
                    } else {
                        chunks[current].pointer.deallocate()
                        chunks[current] = chunk
                    }
                }
            }
            let start = chunks[current].pointer + used
            if let base = bytes.baseAddress { start.copyMemory(from: base, byteCount: bytes.count) }
            start.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
            used += needed
            return (UnsafePointer(start.assumingMemoryBound(to: CChar.self)), Int32(bytes.count))
        }
    }
}
