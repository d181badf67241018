import ArgumentParser
import Foundation
import LinkOutCore
import LinkOutServer
import LinkOutStore

struct Tokens: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Work with recorded tokens.",
        subcommands: [Export.self, Import.self])

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every recorded token, one per line, in the order first seen.")

        @OptionGroup var config: ConfigOption

        @OptionGroup var storeOption: StoreOption

        @Option(help: "jsonl (one JSON object per line) or csv.")
        var format: TokenExportFormat = .jsonl

        func run() throws {
            // The config only tells where the store is; an unreadable config is fine when --store is given.
            let path: String
            if let store = storeOption.store {
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

extension Tokens {
    /// Tokens parked elsewhere (an app backend's queue, a log) brought in, as `POST /v1/tokens` takes them.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Record tokens from a JSON-lines file, each line what POST /v1/tokens takes ({\"token\", \"bundleId\", \"country\"} or {\"tokens\": [...]}); - for standard input."
        )

        @OptionGroup var config: ConfigOption

        @OptionGroup var storeOption: StoreOption

        @Argument(help: ArgumentHelp("The file; - for standard input.", valueName: "file"))
        var file: String

        func run() throws {
            let loaded = try config.load()
            let text = try readInput(file)
            let path = storeOption.location(loaded)
            let store: RecordingStore
            do {
                store = try openStoreForRecording(path)
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            defer { store.tokens.close() }
            if store.created { printError("note: created a new store at \(path)") }
            let intake = TokenRegistrationIntake(store: store.reporting, config: { loaded }) { records in
                try store.tokens.commit(records.map(VisitRecord.token))
            }
            let clock = TimeSource.system
            var totals = (recorded: 0, unchanged: 0, refused: 0)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if line.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) { continue }
                let answer = intake.submit(Array(line.utf8), now: clock.nowMs())
                if answer.status == 503 {
                    for problem in answer.problems { printError("\(file):\(index + 1): \(problem)") }
                    printError(
                        "error: stopped at line \(index + 1); the lines before it are recorded, run the import again (what is recorded stays unchanged)"
                    )
                    throw ExitCode(1)
                }
                totals.recorded += answer.recorded
                totals.unchanged += answer.unchanged
                totals.refused += answer.refused
                for problem in answer.problems { printError("\(file):\(index + 1): \(problem)") }
            }
            print("\(file): \(totals.recorded) tokens recorded, \(totals.unchanged) already recorded; \(totals.refused) refused")
            if totals.refused > 0 { throw ExitCode(1) }
        }
    }
}

extension TokenExportFormat: ExpressibleByArgument {}
