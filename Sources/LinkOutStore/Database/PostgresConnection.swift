internal import CLibpq
import Foundation
import LinkOutCore

#if canImport(Glibc)
import Glibc
#endif

/// A thin owner of one libpq connection. Not thread-safe: one thread uses it at a time (it is opened on
/// the main thread and then used only by the writer's, hence `@unchecked Sendable`).
///
/// libpq blocks, which is what the writer thread wants: it has nothing else to do while its batch is on
/// its way to disk. Loop threads never see this type.
final class PostgresConnection: @unchecked Sendable {
    private var handle: OpaquePointer?
    /// The URL with its password hidden, for errors and logs.
    let displayName: String
    /// The longest a statement may take (the server's `statement_timeout`, and a wait on this side a little
    /// longer for a server that does not answer at all), or nil for no limit (exports, migrations).
    let timeoutMs: Int?
    /// Set when a statement went unanswered: the connection is in an unknown state and is reset before use.
    private var broken = false

    /// Connects. Defaults that the URL may override: a 5 s connect timeout, TCP keepalives so a dead
    /// server is noticed within about half a minute, and `application_name=linkout` for `pg_stat_activity`.
    init(url: String, timeoutMs: Int? = nil) throws {
        displayName = StoreLocation.redactingPassword(url)
        self.timeoutMs = timeoutMs
        // libpq's connect_timeout is in whole seconds, at least 2.
        let connectTimeout = timeoutMs.map { max(2, ($0 + 999) / 1000) } ?? 5
        // Later entries win over earlier ones, and the URL is expanded where `dbname` stands: defaults go
        // first so that the URL's own settings override them.
        let settings: [(String, String)] = [
            ("connect_timeout", String(connectTimeout)), ("keepalives", "1"), ("keepalives_idle", "10"),
            ("keepalives_interval", "5"), ("keepalives_count", "3"), ("application_name", "linkout"),
            ("dbname", url),
        ]
        let connection = withCStrings(settings.map(\.0)) { keywords in
            withCStrings(settings.map(\.1)) { values in
                PQconnectdbParams(keywords, values, 1)
            }
        }
        guard let connection else { throw StoreError("connecting to \(displayName)", "out of memory") }
        handle = connection
        // libpq prints notices ("relation already exists, skipping") on stderr by default.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = lastError
            PQfinish(connection)
            handle = nil
            throw StoreError("connecting to \(displayName)", message)
        }
        try configureSession()
    }

    deinit {
        close()
    }

    func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// Every commit must be durable before its redirects go out, whatever the server's default.
    private func configureSession() throws {
        if let timeoutMs, let handle {
            // Statements are sent and awaited with poll(2), so a server that stops answering cannot hold
            // the writer longer than the limit.
            PQsetnonblocking(handle, 1)
            try execute("SET statement_timeout = \(timeoutMs)")
        }
        try execute("SET synchronous_commit = on")
    }

    var lastError: String {
        guard let handle, let message = PQerrorMessage(handle) else { return "not connected" }
        return Self.trimmed(String(cString: message))
    }

    /// Reconnects if the connection broke (the server restarted, the network dropped it): the writer's
    /// retries then find a working connection without anyone restarting linkout.
    func ensureConnected() throws {
        guard let handle else { throw StoreError("connecting to \(displayName)", "the connection is closed") }
        if PQstatus(handle) == CONNECTION_OK && !broken { return }
        broken = false
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw StoreError("reconnecting to \(displayName)", lastError)
        }
        try configureSession()
    }

    /// True inside a transaction (or a failed one), so a caller cleaning up knows a ROLLBACK is due.
    var inTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Runs one or more statements without parameters (`;`-separated) and returns the last result.
    @discardableResult
    func execute(_ sql: String) throws -> PostgresResult {
        guard let handle else { throw StoreError("running \(Self.summary(sql))", "the connection is closed") }
        if timeoutMs != nil {
            guard PQsendQuery(handle, sql) == 1 else { throw StoreError("running \(Self.summary(sql))", lastError) }
            return try check(awaitResult(sql), sql)
        }
        return try check(PQexec(handle, sql), sql)
    }

    /// Runs one statement with text parameters (nil is NULL). At most 65,535 parameters.
    @discardableResult
    func execute(_ sql: String, parameters: [String?]) throws -> PostgresResult {
        guard let handle else { throw StoreError("running \(Self.summary(sql))", "the connection is closed") }
        precondition(parameters.count <= Int(UInt16.max), "PostgreSQL takes at most 65535 parameters")
        // All values in one buffer of NUL-terminated strings, and a pointer into it for each.
        var bytes: [CChar] = []
        var offsets: [Int?] = []
        offsets.reserveCapacity(parameters.count)
        for parameter in parameters {
            if let parameter {
                offsets.append(bytes.count)
                bytes.append(contentsOf: parameter.utf8CString)
            } else {
                offsets.append(nil)
            }
        }
        bytes.append(0)
        let result = bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            let values: [UnsafePointer<CChar>?] = offsets.map { $0.map { base + $0 } }
            if timeoutMs != nil {
                return PQsendQueryParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0) == 1 ? handle : nil
            }
            return PQexecParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        if timeoutMs != nil {
            guard result != nil else { throw StoreError("running \(Self.summary(sql))", lastError) }
            return try check(awaitResult(sql), sql)
        }
        return try check(result, sql)
    }

    /// After a `PQsend...`: flushes the query and collects its results, waiting at most the timeout (plus
    /// half a second, so the server's own statement_timeout, with its clearer message, fires first). Returns
    /// the first failed result if any, else the last one, as `PQexec` does. The deadline is this machine's
    /// elapsed time (the monotonic clock), not a clock handed in: it bounds `poll` on the socket, as
    /// libcurl's timeouts bound its transfers, and a stepped or stopped clock could only make it spin.
    private func awaitResult(_ sql: String) throws -> OpaquePointer? {
        guard let handle, let timeoutMs else { return nil }
        let deadline = TimeSource.system.monotonicNanoseconds() + UInt64(timeoutMs + 500) * 1_000_000
        func wait(forWriting: Bool) throws {
            let now = TimeSource.system.monotonicNanoseconds()
            guard now < deadline else {
                broken = true
                throw StoreError("running \(Self.summary(sql))", "no answer from \(displayName) within \(timeoutMs) ms")
            }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(forWriting ? POLLIN | POLLOUT : POLLIN), revents: 0)
            let waited = poll(&descriptor, 1, Int32(min(1000, (deadline - now) / 1_000_000 + 1)))
            if waited < 0 && errno != EINTR {
                broken = true
                throw StoreError("running \(Self.summary(sql))", "poll failed: errno \(errno)")
            }
        }
        func consume() throws {
            guard PQconsumeInput(handle) == 1 else {
                broken = true
                throw StoreError("running \(Self.summary(sql))", lastError)
            }
        }
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { break }
            if flushed < 0 {
                broken = true
                throw StoreError("running \(Self.summary(sql))", lastError)
            }
            try wait(forWriting: true)
            try consume()
        }
        var kept: OpaquePointer?
        var keptFailure = false
        while true {
            while PQisBusy(handle) != 0 {
                do {
                    try wait(forWriting: false)
                    try consume()
                } catch {
                    // The connection failed with a result already taken (found by `make test-asan`).
                    if let kept { PQclear(kept) }
                    throw error
                }
            }
            guard let result = PQgetResult(handle) else { break }
            let status = PQresultStatus(result)
            let failed = status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK
            if keptFailure {
                PQclear(result)
            } else {
                if let kept { PQclear(kept) }
                kept = result
                keptFailure = failed
            }
        }
        return kept
    }

    private func check(_ result: OpaquePointer?, _ sql: String) throws -> PostgresResult {
        guard let result else { throw StoreError("running \(Self.summary(sql))", lastError) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = PQresultErrorMessage(result).map { Self.trimmed(String(cString: $0)) } ?? ""
            PQclear(result)
            throw StoreError("running \(Self.summary(sql))", message.isEmpty ? lastError : message)
        }
        return PostgresResult(result)
    }

    /// The start of a statement, enough to tell which one failed.
    static func summary(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return flat.count > 60 ? flat.prefix(60) + "…" : flat
    }

    static func trimmed(_ message: String) -> String {
        var text = Substring(message)
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }
}

/// One query's rows, as text (libpq's default format). Freed with the object.
final class PostgresResult {
    private let result: OpaquePointer

    init(_ result: OpaquePointer) {
        self.result = result
    }

    deinit {
        PQclear(result)
    }

    var rowCount: Int { Int(PQntuples(result)) }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(result, Int32(row), Int32(column)) != 0
    }

    func text(_ row: Int, _ column: Int) -> String {
        guard let value = PQgetvalue(result, Int32(row), Int32(column)) else { return "" }
        return String(cString: value)
    }

    func optionalText(_ row: Int, _ column: Int) -> String? {
        isNull(row, column) ? nil : text(row, column)
    }

    func int64(_ row: Int, _ column: Int) throws -> Int64 {
        guard let number = Int64(text(row, column)) else {
            throw StoreError("reading", "column \(column) is not an integer: \(text(row, column))")
        }
        return number
    }

    func optionalInt64(_ row: Int, _ column: Int) throws -> Int64? {
        isNull(row, column) ? nil : try int64(row, column)
    }

    /// PostgreSQL's text form of a boolean is `t` or `f`.
    func bool(_ row: Int, _ column: Int) -> Bool {
        text(row, column) == "t"
    }
}

/// Calls `body` with a NULL-terminated array of C strings that live for the call, as libpq's keyword and
/// value arrays want.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    var storage = strings.map { strdup($0) }
    defer { storage.forEach { free($0) } }
    storage.append(nil)
    let pointers = storage.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
