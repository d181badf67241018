import LinkOutCore
import LinkOutStore
import Logging

// Opening a store, by its location (a SQLite path or a postgres:// URL): the one place that turns a
// location into a connection, for `serve`'s parts and the commands alike. Each part of the server opens
// a connection of its own, so that none waits on another's.

/// Opens the store `serve` writes to: PostgreSQL for a `postgres://` URL (whose schema must be current),
/// else the SQLite file (created or upgraded as needed). A PostgreSQL store rides out outages as
/// `outage` says: behind a local spool (the default), or failing closed; SQLite ignores it.
package func openStoreForServing(
    _ location: String, outage: StoreOutageSettings = StoreOutageSettings(), spoolPath: String = StoreOutageSettings.defaultSpoolPath,
    logger: Logger? = nil
) throws -> any TokenStore {
    switch StoreLocation(location) {
    case .postgres(let url):
        switch outage.mode {
        case .failClosed:
            return try PostgresTokenStore(url: url, timeoutMs: outage.timeoutMs)
        case .spool:
            return try SpoolingTokenStore(url: url, spoolPath: spoolPath, timeoutMs: outage.timeoutMs) { level, message, metadata in
                let fields = metadata.mapValues { Logger.MetadataValue.string($0) }
                switch level {
                case .notice: logger?.notice("\(message)", metadata: fields)
                case .warning: logger?.warning("\(message)", metadata: fields)
                case .error: logger?.error("\(message)", metadata: fields)
                }
            }
        }
    case .sqlite(let path):
        return try SQLiteTokenStore(path: path)
    }
}

/// Opens a store for an export: never creates or changes one.
package func openStoreForReading(_ location: String) throws -> any TokenStore {
    switch StoreLocation(location) {
    case .postgres(let url): try PostgresTokenStore(url: url)
    case .sqlite(let path): try SQLiteTokenStore(readingFrom: path)
    }
}

/// Opens the reporting side of a store (line items, the outbox) on a connection of its own.
package func openReportingStore(_ location: String, timeoutMs: Int? = nil) throws -> any ReportingStore {
    switch StoreLocation(location) {
    case .postgres(let url): try SQLReportingStore(postgresURL: url, timeoutMs: timeoutMs)
    case .sqlite(let path): try SQLReportingStore(sqlitePath: path)
    }
}

/// Opens the dashboard's reads of a store.
package func openDashboardStore(_ location: String, timeoutMs: Int? = nil) throws -> DashboardStore {
    switch StoreLocation(location) {
    case .postgres(let url): try DashboardStore(postgresURL: url, timeoutMs: timeoutMs)
    case .sqlite(let file): try DashboardStore(sqlitePath: file)
    }
}
