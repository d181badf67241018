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
                printError(
                    "error: \(location.redacted) is not a postgres:// URL; a SQLite store is created and upgraded by `linkout serve` itself (and by `tokens import` and `transactions import`)"
                )
                throw ExitCode(1)
            }
            do {
                let (applied, version) = try PostgresTokenStore.migrate(url: url)
                if applied.isEmpty {
                    print("\(location.redacted): schema already at version \(version)")
                } else {
                    print(
                        "\(location.redacted): applied migration\(applied.count == 1 ? "" : "s") \(applied.map(String.init).joined(separator: ", ")); schema at version \(version)"
                    )
                }
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }
}
