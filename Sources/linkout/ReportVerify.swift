import ArgumentParser
import Foundation
import LinkOutCore
import LinkOutServer
import LinkOutStore
import Logging

extension Report {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read Apple's copy of accepted reports back and compare it, field by field, with what linkout sent.",
            discussion: """
                Exit 0 when every report checked matches, 1 on any difference (a report Apple no longer returns \
                is one), 2 when Apple refused the key (401), 3 when Apple kept failing and not every report \
                was checked.
                """)

        @OptionGroup var config: ConfigOption

        @OptionGroup var storeOption: StoreOption

        @Option(help: ArgumentHelp("Only the reports of tokens created in this UTC month.", valueName: "YYYY-MM"))
        var month: String?

        @Option(help: ArgumentHelp("Check this many reports, chosen at random, instead of all.", valueName: "N"))
        var sample: Int?

        @Option(
            help: ArgumentHelp(
                "Requests to Apple per second, at most (\(VerifyPacing.allowedRates.lowerBound) to \(VerifyPacing.allowedRates.upperBound)).",
                valueName: "N"))
        var rate: Double = VerifyPacing.defaultPerSecond

        @Option(help: "text or json.")
        var format: String = "text"

        func validate() throws {
            if format != "text" && format != "json" { throw ValidationError("--format must be text or json") }
            if let month, UTCMonth(month) == nil {
                throw ValidationError("--month must be a UTC month as YYYY-MM, such as 2026-05, not '\(month)'")
            }
            if let sample, sample < 1 { throw ValidationError("--sample must be 1 or more, not \(sample)") }
            if !VerifyPacing.allowedRates.contains(rate) {
                throw ValidationError(
                    "--rate must be from \(VerifyPacing.allowedRates.lowerBound) to \(VerifyPacing.allowedRates.upperBound) requests a second, not \(rate): reading reports back must not compete with sending them"
                )
            }
        }

        func run() throws {
            LoggingSystem.bootstrap(OneLineLogHandler.standardError)
            let loaded = try config.withReportingKey(config.load())
            guard let settings = loaded.reporting else {
                printError("error: \(config.config) has no reporting section: there is no key to ask Apple with, and nothing was sent")
                throw ExitCode(1)
            }
            let selection = ReportVerifier.Selection(month: month.flatMap(UTCMonth.init), sample: sample)
            let outcome: ReportVerifier.Outcome
            do {
                let reportingStore = try openReportingStore(storeOption.location(loaded))
                let verifier = try ReportVerifier(settings: settings, store: reportingStore, perSecond: rate, clock: .system)
                outcome = try verifier.run(selection)
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            print(
                format == "json"
                    ? ReportVerifyText.json(outcome, selection: selection) : ReportVerifyText.text(outcome, selection: selection),
                terminator: "")
            switch outcome.ending {
            case .unauthorized(let answer):
                printError("error: Apple refused the key (\(answer)); check reporting.keyFile, keyId, issuerId and the apps' bundle IDs")
                throw ExitCode(2)
            case .gaveUp(let why) where outcome.differing.isEmpty:
                printError("error: stopped: \(why); \(outcome.planned - outcome.checked.count) report(s) not checked")
                throw ExitCode(3)
            case .gaveUp(let why):
                printError("error: stopped: \(why); \(outcome.planned - outcome.checked.count) report(s) not checked")
                throw ExitCode(1)
            case .finished:
                if !outcome.differing.isEmpty { throw ExitCode(1) }
            }
        }
    }
}

/// `report verify`'s findings, one line per difference for people, or one JSON document for scripts.
enum ReportVerifyText {
    /// `3 reports checked (of 3 accepted …): 2 match Apple's copy, 1 differs, 0 unreadable`.
    static func summary(_ outcome: ReportVerifier.Outcome, selection: ReportVerifier.Selection) -> String {
        let scope = selection.month.map { "of tokens created in \($0) (UTC)" } ?? "in the store"
        let sample = selection.sample == nil ? "" : ", a random sample"
        let matched = outcome.matched, differing = outcome.differing.count, unreadable = outcome.unreadable.count
        return "reports: \(outcome.checked.count) checked\(sample) of \(outcome.selected) accepted \(scope): "
            + "\(matched) match\(matched == 1 ? "es" : "") Apple's copy, \(differing) differ\(differing == 1 ? "s" : ""), \(unreadable) unreadable"
    }

    static func text(_ outcome: ReportVerifier.Outcome, selection: ReportVerifier.Selection) -> String {
        var out = ""
        for checked in outcome.checked {
            let report = "\(checked.report.report.requestIdentifier) \(checked.report.report.externalPurchaseId)"
            switch checked.finding {
            case .matches: continue
            case .differs(let differences):
                for difference in differences {
                    out += "\(report) \(difference.path): linkout sent \(shown(difference.sent)), Apple holds \(shown(difference.held))\n"
                }
            case .notHeld:
                out += "\(report) (report): linkout sent it and Apple accepted it, Apple holds none now (404)\n"
            case .notJSON(let body):
                out += "\(report) (report): Apple's copy is not JSON: \(body)\n"
            case .unreadable(let why):
                out += "\(report) (report): not checked, Apple answered \(why)\n"
            }
        }
        return out + summary(outcome, selection: selection) + "\n"
    }

    private static func shown(_ value: JSONValue?) -> String {
        value?.text ?? "nothing"
    }

    static func json(_ outcome: ReportVerifier.Outcome, selection: ReportVerifier.Selection) -> String {
        var differences: [JSONValue] = []
        var unreadable: [JSONValue] = []
        for checked in outcome.checked {
            let ids: [JSONValue.Member] = [
                .init(key: "requestIdentifier", value: .string(checked.report.report.requestIdentifier)),
                .init(key: "externalPurchaseId", value: .string(checked.report.report.externalPurchaseId)),
            ]
            func difference(_ path: String, _ kind: String, _ sent: JSONValue?, _ held: JSONValue?) -> JSONValue {
                .object(
                    ids + [
                        .init(key: "path", value: .string(path)), .init(key: "kind", value: .string(kind)),
                        .init(key: "sent", value: sent ?? .null), .init(key: "held", value: held ?? .null),
                    ])
            }
            switch checked.finding {
            case .matches: break
            case .differs(let found):
                differences += found.map { difference($0.path, $0.kind.rawValue, $0.sent, $0.held) }
            case .notHeld:
                differences.append(difference("(report)", "not_held", nil, nil))
            case .notJSON(let body):
                differences.append(difference("(report)", "not_json", nil, .string(body)))
            case .unreadable(let why):
                unreadable.append(.object(ids + [.init(key: "answer", value: .string(why))]))
            }
        }
        let stopped: JSONValue =
            switch outcome.ending {
            case .finished: .null
            case .unauthorized(let answer): .string("unauthorized: \(answer)")
            case .gaveUp(let why): .string(why)
            }
        return JSONValue.object([
            .init(key: "month", value: selection.month.map { .string($0.description) } ?? .null),
            .init(key: "sample", value: selection.sample.map { .integer(Int64($0)) } ?? .null),
            .init(key: "selected", value: .integer(Int64(outcome.selected))),
            .init(key: "checked", value: .integer(Int64(outcome.checked.count))),
            .init(key: "matched", value: .integer(Int64(outcome.matched))),
            .init(key: "differing", value: .integer(Int64(outcome.differing.count))),
            .init(key: "stopped", value: stopped),
            .init(key: "differences", value: .array(differences)),
            .init(key: "unreadable", value: .array(unreadable)),
        ]).text + "\n"
    }
}
