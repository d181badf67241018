import ArgumentParser
import LinkOutCore
import LinkOutStore

struct Tokens: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work with recorded tokens.",
        subcommands: [Export.self])

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every recorded token, one per line, in the order first seen.")

        @OptionGroup var config: ConfigOption

        @Option(help: ArgumentHelp("The store, overriding the config: a SQLite file path, or a postgres:// URL.", valueName: "path|url"))
        var store: String?

        @Option(help: "jsonl (one JSON object per line) or csv.")
        var format: TokenExportFormat = .jsonl

        func run() throws {
            // The config only tells where the store is; an unreadable config is fine when --store is given.
            let path: String
            if let store {
                path = store
            } else {
                path = storePath(option: nil, config: try config.load())
            }
            do {
                let reader = try openStoreForReading(path)
                if let header = format.header { print(header) }
                try reader.forEachToken { print(format.line($0)) }
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
    }
}

extension TokenExportFormat: ExpressibleByArgument {}
