import ArgumentParser
import LinkOutCore
import LinkOutStore
import Logging

struct Store: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work with the store itself.",
        subcommands: [Migrate.self])

    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring a PostgreSQL store's schema up to this linkout's version (safe to run again, and from several hosts at once).")

        @OptionGroup var config: ConfigOption

        @Option(help: ArgumentHelp("The PostgreSQL store (postgres://USER@HOST:PORT/DB), overriding the config.", valueName: "url"))
        var store: String?

        func run() throws {
            // The config only tells where the store is; an unreadable config is fine when --store is given.
            let location = try StoreLocation(store ?? storePath(option: nil, config: config.load()))
            guard case .postgres(let url) = location else {
                printError("error: \(location.redacted) is not a postgres:// URL; a SQLite store is created and upgraded by `linkout serve` itself")
                throw ExitCode(1)
            }
            do {
                let (applied, version) = try PostgresTokenStore.migrate(url: url)
                if applied.isEmpty {
                    print("\(location.redacted): schema already at version \(version)")
                } else {
                    print("\(location.redacted): applied migration\(applied.count == 1 ? "" : "s") \(applied.map(String.init).joined(separator: ", ")); schema at version \(version)")
                }
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }
}

/// Opens the store `serve` writes to: PostgreSQL for a `postgres://` URL (whose schema must be current),
/// else the SQLite file (created or upgraded as needed). A PostgreSQL store rides out outages as
/// `outage` says: behind a local spool (the default), or failing closed; SQLite ignores it.
func openStoreForServing(
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
func openStoreForReading(_ location: String) throws -> any TokenStore {
    switch StoreLocation(location) {
    case .postgres(let url): try PostgresTokenStore(url: url)
    case .sqlite(let path): try SQLiteTokenStore(readingFrom: path)
    }
}

/// Opens the reporting side of a store (line items, the outbox) on a connection of its own.
func openReportingStore(_ location: String, timeoutMs: Int? = nil) throws -> any ReportingStore {
    switch StoreLocation(location) {
    case .postgres(let url): try SQLReportingStore(postgresURL: url, timeoutMs: timeoutMs)
    case .sqlite(let path): try SQLReportingStore(sqlitePath: path)
    }
}
