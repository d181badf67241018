import LinkOutCore

/// A token's stored fields, declared once for both stores: each column's name, its PostgreSQL type (the
/// cast of its insert parameter), and the `StoredToken` property it holds, which is how a row is read back
/// and how PostgreSQL's insert binds it. The export's SELECT, PostgreSQL's INSERT column list, its casts
/// and its parameters all come from `all`, so a column cannot be added to one and missed in another, nor
/// read at the wrong position.
///
/// The SQLite `tokens` view and PostgreSQL's `tokens` table both have these columns under these names.
/// SQLite's `visits` table (one row per visit, not per token) keeps its own insert.
struct TokenColumn {
    enum Field {
        case text(WritableKeyPath<StoredToken, String>)
        case optionalText(WritableKeyPath<StoredToken, String?>)
        case int64(WritableKeyPath<StoredToken, Int64>)
        case optionalInt64(WritableKeyPath<StoredToken, Int64?>)
        case bool(WritableKeyPath<StoredToken, Bool>)
    }

    let name: String
    let field: Field

    init(_ name: String, _ field: Field) {
        self.name = name
        self.field = field
    }

    var postgresType: String {
        switch field {
        case .text, .optionalText: "text"
        case .int64, .optionalInt64: "bigint"
        case .bool: "boolean"
        }
    }

    /// Sets the token's property from column `index` of the row.
    func read(_ row: any SQLRow, _ index: Int, into token: inout StoredToken) throws {
        switch field {
        case .text(let path): token[keyPath: path] = try row.text(index)
        case .optionalText(let path): token[keyPath: path] = try row.optionalText(index)
        case .int64(let path): token[keyPath: path] = try row.int64(index)
        case .optionalInt64(let path): token[keyPath: path] = try row.optionalInt64(index)
        case .bool(let path): token[keyPath: path] = try row.bool(index)
        }
    }

    /// The property as a PostgreSQL text parameter (libpq sends every parameter as text; nil is NULL).
    func postgresParameter(_ token: StoredToken) -> String? {
        switch field {
        case .text(let path): token[keyPath: path]
        case .optionalText(let path): token[keyPath: path]
        case .int64(let path): String(token[keyPath: path])
        case .optionalInt64(let path): token[keyPath: path].map { String($0) }
        case .bool(let path): token[keyPath: path] ? "true" : "false"
        }
    }
}

enum TokenColumns {
    /// In the export's order, which is also the order of PostgreSQL's insert parameters.
    /// `nonisolated(unsafe)`: key paths are not `Sendable` to the compiler, but these are literals of an
    /// immutable array nobody writes.
    nonisolated(unsafe) static let all: [TokenColumn] = [
        TokenColumn("external_purchase_id", .text(\.externalPurchaseId)),
        TokenColumn("app_apple_id", .int64(\.appAppleId)),
        TokenColumn("bundle_id", .text(\.bundleId)),
        TokenColumn("token_creation_date", .int64(\.tokenCreationDate)),
        TokenColumn("token_type", .optionalText(\.tokenType)),
        TokenColumn("token_expiration_date", .optionalInt64(\.tokenExpirationDate)),
        TokenColumn("environment", .text(\.environment)),
        TokenColumn("link", .text(\.link)),
        TokenColumn("country", .text(\.country)),
        TokenColumn("destination", .text(\.destination)),
        TokenColumn("first_seen", .int64(\.firstSeen)),
        TokenColumn("last_seen", .int64(\.lastSeen)),
        TokenColumn("hits", .int64(\.hits)),
        TokenColumn("stale", .bool(\.stale)),
        TokenColumn("other_visits", .int64(\.otherVisits)),
        TokenColumn("experiment", .optionalText(\.experiment)),
        TokenColumn("variant", .optionalText(\.variant)),
        TokenColumn("path", .optionalText(\.path)),
    ]

    /// The column names, comma-separated, each prefixed (`t.`) when the query names its table.
    static func names(prefix: String = "") -> String {
        all.map { prefix + $0.name }.joined(separator: ", ")
    }

    /// The export's SELECT list over `tokens AS t LEFT JOIN report_tokens AS r`: the token's columns, then
    /// its reporting state (`SQLReportingStore.exportColumns`, two columns).
    static var exportSelect: String {
        names(prefix: "t.") + ", " + SQLReportingStore.exportColumns
    }

    /// One row of `exportSelect`. Every property is set from its column (a test holds `all` to every
    /// property of `StoredToken` but the two reporting ones), so the placeholder values never show.
    static func exported(_ row: any SQLRow) throws -> StoredToken {
        var token = StoredToken(
            externalPurchaseId: "", appAppleId: 0, bundleId: "", tokenCreationDate: 0, tokenType: nil,
            tokenExpirationDate: nil, environment: "", link: "", country: "", destination: "", firstSeen: 0,
            lastSeen: 0, hits: 0, stale: false)
        for (index, column) in all.enumerated() { try column.read(row, index, into: &token) }
        token.report = try row.optionalText(all.count)
        token.reportedAs = try row.optionalText(all.count + 1)
        return token
    }
}
