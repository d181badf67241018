import ArgumentParser
import Foundation
import LinkOutCore
import LinkOutServer
import LinkOutStore
import Logging

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Report tokens to Apple, and see where reporting stands.",
        subcommands: [Run.self, Retry.self, Status.self, Verify.self])

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send every report that is due now, then exit (for cron, tests and backfills); serve does this on its own.")

        @OptionGroup var config: ConfigOption

        @OptionGroup var storeOption: StoreOption

        func run() throws {
            let (reporter, _) = try Self.openReporter(config, storeOption, clock: .system)
            try Self.sendRound(reporter)
        }

        /// For the commands that send to Apple: the config's reporter over its store, with the key read;
        /// exit 1, said, when the config has no reporting section or the store cannot be opened.
        static func openReporter(
            _ config: ConfigOption, _ storeOption: StoreOption, clock: TimeSource
        ) throws -> (Reporter, any OutboxStore) {
            LoggingSystem.bootstrap(OneLineLogHandler.standardError)
            let loaded = try config.withReportingKey(config.load())
            guard let settings = loaded.reporting else {
                printError("error: \(config.config) has no reporting section: nothing is sent to Apple")
                throw ExitCode(1)
            }
            do {
                let reportingStore = try openReportingStore(storeOption.location(loaded))
                return (
                    try Reporter(settings: settings, store: reportingStore, logger: Logger(label: "linkout"), clock: clock), reportingStore
                )
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }

        /// One round, and what it did on stdout; exit 2 when Apple refused the key.
        static func sendRound(_ reporter: Reporter) throws {
            let round = reporter.runRound()
            print(
                "reports: \(round.planned) planned, \(round.accepted) accepted, \(round.failed) failed, \(round.retried) to retry, \(round.unauthorized) refused the key"
            )
            if round.unauthorized > 0 { throw ExitCode(2) }
        }
    }

    struct Retry: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send again now reports Apple refused, unchanged and with the same requestIdentifier, then send what is due.",
            discussion: """
                Apple took nothing of a refused report, and its rules say to send it again with the same \
                requestIdentifier. A report whose line items were wrong is mended by a restatement instead (a new \
                report, planned on its own); use this when the refusal was Apple's state (an entitlement not yet \
                active, say) and it has changed. `linkout report status` lists the refused reports.
                """)

        @OptionGroup var config: ConfigOption

        @OptionGroup var storeOption: StoreOption

        @Argument(help: "The requestIdentifier of one refused report.")
        var requestIdentifier: String?

        @Flag(help: "Every refused report.")
        var all = false

        @Option(help: ArgumentHelp("The refused reports of tokens created in this month (UTC).", valueName: "YYYY-MM"))
        var month: String?

        func validate() throws {
            let chosen = [requestIdentifier != nil, all, month != nil].filter { $0 }.count
            if chosen != 1 { throw ValidationError("name one refused report's requestIdentifier, or --all, or --month YYYY-MM") }
            if let month, UTCMonth(month) == nil { throw ValidationError("--month must be a month such as 2026-11, not \(month)") }
        }

        func run() throws {
            let selection: RefusedSelection =
                all
                ? .all
                : month.flatMap(UTCMonth.init).map(RefusedSelection.month)
                    ?? .report(requestIdentifier: requestIdentifier ?? "")
            let clock = TimeSource.system
            let (reporter, reportingStore) = try Run.openReporter(config, storeOption, clock: clock)
            let retried: RefusedRetry
            do {
                retried = try reportingStore.retryRefused(selection, now: clock.nowMs())
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            for request in retried.notRefused {
                printError(
                    "note: \(request) is not a refused report that still stands for its token (accepted, waiting, or replaced by a later report): nothing to send again"
                )
            }
            print("refused reports sent again: \(retried.requeued.count)")
            if case .report = selection, retried.requeued.isEmpty { throw ExitCode(1) }
            try Run.sendRound(reporter)
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Tokens by reporting state, and those past day 7 and day 10 without an accepted report, by app and environment.")

        @OptionGroup var config: ConfigOption

        @OptionGroup var storeOption: StoreOption

        @Option(help: "text or json.")
        var format: String = "text"

        func validate() throws {
            if format != "text" && format != "json" { throw ValidationError("--format must be text or json") }
        }

        func run() throws {
            let loaded = try config.load()
            let window = loaded.reporting?.noPurchaseAfterMs ?? ReportingSettings.defaultNoPurchaseAfterMs
            let gather = loaded.reporting?.gatherMs ?? ReportingSettings.defaultGatherMs
            let summary: ReportStatusSummary
            let failed: [FailedReport]
            let notifications: [StoredNotification]
            let months: [MonthClose.State]
            let providers: ProviderEventCounts
            var history: [ReportStatusText.HistoryReading]?
            let refused: (count: Int64, months: [UTCMonth])
            let now = TimeSource.system.nowMs()
            do {
                let reportingStore = try openReportingStore(storeOption.location(loaded))
                try reportingStore.syncTokens()
                summary = try reportingStore.status(now: now, noPurchaseAfterMs: window, gatherMs: gather)
                months = try reportingStore.monthClose(config: loaded, now: now)
                failed = try reportingStore.failedReports(limit: 20)
                refused = try reportingStore.refusedCount()
                notifications = try reportingStore.recentNotifications(limit: 20)
                providers = try reportingStore.providerEventCounts(limit: 20)
                if loaded.reporting != nil, loaded.notifications?.history == true {
                    history = ReportStatusText.HistoryReading.all(apps: loaded.apps, marks: try reportingStore.notificationHistoryMarks())
                }
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            let reporting: ReportStatusText.Reporting = loaded.reporting == nil ? .off(config: config.config) : .on
            // Shown once a provider is configured or has sent anything.
            let showProviders = !loaded.paymentProviders.providers.isEmpty || !providers.rows.isEmpty
            print(
                format == "json"
                    ? ReportStatusText.json(
                        summary, failed: failed, notifications: notifications, reporting: reporting, months: months,
                        providers: showProviders ? providers : nil, history: history, refused: refused, now: now)
                    : ReportStatusText.table(
                        summary, failed: failed, notifications: notifications, reporting: reporting, months: months, now: now,
                        providers: showProviders ? providers : nil, history: history, refused: refused),
                terminator: "")
        }
    }
}
