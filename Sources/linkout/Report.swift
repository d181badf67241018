import ArgumentParser
import Foundation
import LinkOutCore
import LinkOutServer
import LinkOutStore
import Logging

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Report tokens to Apple, and see where reporting stands.",
        subcommands: [Run.self, Status.self, Verify.self])

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send every report that is due now, then exit (for cron, tests and backfills); serve does this on its own.")

        @OptionGroup var config: ConfigOption

        @OptionGroup var storeOption: StoreOption

        func run() throws {
            LoggingSystem.bootstrap(OneLineLogHandler.standardError)
            let loaded = try config.withReportingKey(config.load())
            guard let settings = loaded.reporting else {
                printError("error: \(config.config) has no reporting section: nothing is sent to Apple")
                throw ExitCode(1)
            }
            let reporter: Reporter
            do {
                let reportingStore = try openReportingStore(storeOption.location(loaded))
                reporter = try Reporter(settings: settings, store: reportingStore, logger: Logger(label: "linkout"))
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            let round = reporter.runRound()
            print("reports: \(round.planned) planned, \(round.accepted) accepted, \(round.failed) failed, \(round.retried) to retry, \(round.unauthorized) refused the key")
            if round.unauthorized > 0 { throw ExitCode(2) }
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
            let now = TimeSource.system.nowMs()
            do {
                let reportingStore = try openReportingStore(storeOption.location(loaded))
                try reportingStore.syncTokens()
                summary = try reportingStore.status(now: now, noPurchaseAfterMs: window, gatherMs: gather)
                months = try reportingStore.monthClose(config: loaded, now: now)
                failed = try reportingStore.failedReports(limit: 20)
                notifications = try reportingStore.recentNotifications(limit: 20)
                providers = try reportingStore.providerEventCounts(limit: 20)
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            let reporting: ReportStatusText.Reporting = loaded.reporting == nil ? .off(config: config.config) : .on
            // Shown once a provider is configured or has sent anything.
            let showProviders = !loaded.paymentProviders.providers.isEmpty || !providers.rows.isEmpty
            print(format == "json"
                ? ReportStatusText.json(
                    summary, failed: failed, notifications: notifications, reporting: reporting, months: months,
                    providers: showProviders ? providers : nil)
                : ReportStatusText.table(
                    summary, failed: failed, notifications: notifications, reporting: reporting, months: months, now: now,
                    providers: showProviders ? providers : nil),
                terminator: "")
        }
    }
}
