import ArgumentParser
import Foundation
import LinkOutCore
import LinkOutServer
import LinkOutStore

struct Transactions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Feed the checkout's transactions to linkout for reporting to Apple.",
        subcommands: [Import.self])

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Store line items from a JSON-lines file (a payment provider's export, a backfill): each line is what POST /v1/line-items takes, stored all or nothing."
        )

        @OptionGroup var config: ConfigOption

        @OptionGroup var storeOption: StoreOption

        @Argument(
            help: ArgumentHelp(
                "The file, one {\"externalPurchaseId\" or \"linkoutRef\", \"lineItems\"} object per line; - for standard input.",
                valueName: "file"))
        var file: String

        func run() throws {
            let loaded = try config.load(forServing: true)
            let text = try readInput(file)
            let path = storeOption.location(loaded)
            let store: RecordingStore
            do {
                store = try openStoreForRecording(path)
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            // Line items go to reporting's side only; the token side was opened to create the store.
            store.tokens.close()
            if store.created { printError("note: created a new store at \(path)") }
            let intake = LineItemIntake(store: store.reporting, signingSecret: loaded.signing?.secret)
            let clock = TimeSource.system
            var counts = (stored: 0, unchanged: 0, restated: 0, refused: 0)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if line.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) { continue }
                let answer = intake.submit(Array(line.utf8), now: clock.nowMs())
                guard answer.status == 200 else {
                    counts.refused += 1
                    for problem in answer.problems { printError("\(file):\(index + 1): \(problem)") }
                    continue
                }
                counts.stored += answer.stored?.added.count ?? 0
                counts.restated += answer.stored?.restated.count ?? 0
                counts.unchanged += answer.stored?.unchanged.count ?? 0
            }
            print(
                "\(file): \(counts.stored) line items stored, \(counts.restated) restated, \(counts.unchanged) already stored; \(counts.refused) lines refused"
            )
            if loaded.reporting == nil, counts.stored + counts.restated > 0 {
                printError(
                    "warning: reporting is OFF: \(config.config) has no reporting section, so these line items are kept but nothing is sent to Apple until it has one (docs/reporting.md)"
                )
            }
            if counts.refused > 0 { throw ExitCode(1) }
        }
    }
}
