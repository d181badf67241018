import Foundation
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

/// The store a command records into (`tokens import`, `transactions import`): both sides of it, and
/// whether a new SQLite file was made.
package struct RecordingStore {
    package var tokens: any TokenStore
    /// Reporting's side, as they record through it: line items, and the tokens recorded already.
    package var reporting: any LineItemStore & RecordedTokenStore
    /// A SQLite file that did not exist was created: the command says so, since a mistyped `--store`
    /// would otherwise go unnoticed.
    package var created: Bool
}

/// Opens the store a command records into as `serve` opens it: the token side first, by
/// `openStoreForServing`, so a SQLite file that is missing is created (and an older one upgraded) by the
/// same migrations in the same way, then reporting's side on the file that now exists. Importing into a
/// fresh folder works as serving there would. A command keeps no outage spool: a PostgreSQL store that
/// does not answer fails it (run it again), and its schema is `linkout store migrate`'s, as for `serve`.
package func openStoreForRecording(_ location: String) throws -> RecordingStore {
    var created = false
    if case .sqlite(let path) = StoreLocation(location) { created = !FileManager.default.fileExists(atPath: path) }
    let tokens = try openStoreForServing(location, outage: StoreOutageSettings(mode: .failClosed))
    do {
        return RecordingStore(tokens: tokens, reporting: try openReportingStore(location), created: created)
    } catch {
        tokens.close()
        throw error
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

/// A part of `serve`'s own connection to the reporting tables: a notification never waits on the
/// reporter's, nor a checkout on either. In spool mode serve starts while PostgreSQL is down, and so do
/// these parts: each connects once the server answers, failing meanwhile as in any outage (the API and the
/// intakes answer 503, the reporter tries again). Throws, naming `part`, when the store cannot be opened.
func openReportingStore(for part: String, config: GatewayConfig, logger: Logger) throws -> any ReportingStore {
    let timeoutMs = config.storeOutage.timeoutMs
    do {
        guard config.storeOutage.mode == .spool, case .postgres(let url) = StoreLocation(config.store) else {
            return try openReportingStore(config.store, timeoutMs: timeoutMs)
        }
        let opened = try SQLReportingStore.connectingWhenReachable(postgresURL: url, timeoutMs: timeoutMs)
        if let unreachable = opened.unreachable {
            logger.warning("PostgreSQL unreachable at start; \(part) connects once it answers", metadata: ["error": "\(unreachable)"])
        }
        return opened.store
    } catch {
        throw ServerError("cannot open the store for \(part): \(error)")
    }
}
