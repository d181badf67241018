import Foundation
import LinkOutCore
import LinkOutStore

/// `linkout report verify`: reads Apple's stored copy of each accepted report back (`GET
/// /externalPurchase/v1/reports/{requestIdentifier}`, with `AppleReportClient`'s one transfer and the same
/// JWT as sending) and compares it with the body the outbox kept (`ReportComparison`). Paced by
/// `VerifyPacing`, one request at a time on the calling thread, so it never competes with the reporter's
/// sending for Apple's rate limit.
package final class ReportVerifier {
    /// Which accepted reports to check.
    package struct Selection: Sendable {
        /// Reports of tokens created in this month (UTC); nil: every month.
        package var month: UTCMonth?
        /// Check this many, chosen at random; nil: all.
        package var sample: Int?

        package init(month: UTCMonth?, sample: Int?) {
            self.month = month
            self.sample = sample
        }
    }

    /// What became of one report.
    package enum Finding: Sendable, Equatable {
        case matches
        /// Apple's copy differs, field by field.
        case differs([ReportDifference])
        /// Apple returns no report with this identifier (404), though it accepted one: a difference.
        case notHeld
        /// Apple's copy is not JSON (its body, cut short): a difference, since what linkout sent was.
        case notJSON(String)
        /// Apple answered something that is neither the report nor its absence (another 4xx): not checked.
        case unreadable(String)

        /// Whether Apple's copy is other than what linkout sent.
        package var isDifference: Bool {
            switch self {
            case .differs, .notHeld, .notJSON: true
            case .matches, .unreadable: false
            }
        }
    }

    package struct Checked: Sendable, Equatable {
        package var report: AcceptedReport
        package var finding: Finding
    }

    /// How the run ended.
    package enum Ending: Sendable, Equatable {
        /// Every selected report was checked (or found unreadable).
        case finished
        /// Apple refused the key (401/403): nothing more was asked.
        case unauthorized(String)
        /// Apple kept failing (`VerifyPacing.triesPerReport` times in a row): the rest was not checked.
        case gaveUp(String)
    }

    package struct Outcome: Sendable, Equatable {
        /// Accepted reports the selection names (before any sample).
        package var selected: Int
        /// Reports the run meant to check (the sample's size, or `selected`).
        package var planned: Int
        package var checked: [Checked]
        package var ending: Ending

        package var matched: Int { checked.filter { $0.finding == .matches }.count }
        package var differing: [Checked] { checked.filter { $0.finding.isDifference } }
        package var unreadable: [Checked] { checked.filter { if case .unreadable = $0.finding { true } else { false } } }
    }

    private let client: AppleReportClient
    private let store: any AcceptedReportStore
    private var pacing: VerifyPacing
    /// The time of day for the JWTs and Apple's Retry-After; the monotonic side paces the requests.
    private let clock: TimeSource
    private let sleep: (Int64) -> Void
    /// Reports read from the store per query while checking all of them.
    private let page = 200

    /// - Parameter settings: with `privateKeyPEM` read from `keyFile`.
    package init(
        settings: ReportingSettings, store: any AcceptedReportStore, perSecond: Double, clock: TimeSource,
        sleep: @escaping (Int64) -> Void = { Thread.sleep(forTimeInterval: Double($0) / 1000) }
    ) throws {
        client = try AppleReportClient(settings: settings)
        self.store = store
        pacing = VerifyPacing(perSecond: perSecond)
        self.clock = clock
        self.sleep = sleep
    }

    /// Checks the selected reports; `progress` is called after each (for a live line on a terminal).
    package func run(_ selection: Selection, progress: (Checked) -> Void = { _ in }) throws -> Outcome {
        let created = selection.month?.milliseconds
        let selected = try store.countAcceptedReports(tokensCreated: created)
        var outcome = Outcome(
            selected: selected, planned: selection.sample.map { min($0, selected) } ?? selected, checked: [], ending: .finished)
        func checkAll(_ reports: [AcceptedReport]) -> Bool {
            for report in reports {
                switch checkOne(report) {
                case .checked(let finding):
                    let checked = Checked(report: report, finding: finding)
                    outcome.checked.append(checked)
                    progress(checked)
                case .stop(let ending):
                    outcome.ending = ending
                    return false
                }
            }
            return true
        }
        if let sample = selection.sample {
            _ = checkAll(try store.sampleAcceptedReports(tokensCreated: created, count: sample))
            return outcome
        }
        var after: String?
        while true {
            let reports = try store.acceptedReports(tokensCreated: created, after: after, limit: page)
            guard let last = reports.last, checkAll(reports) else { break }
            after = last.report.requestIdentifier
        }
        return outcome
    }

    private enum Step {
        case checked(Finding)
        case stop(Ending)
    }

    /// One report: asked for as often as Apple fails it, up to `triesPerReport`, each ask paced.
    private func checkOne(_ accepted: AcceptedReport) -> Step {
        var why = ""
        for _ in 0..<VerifyPacing.triesPerReport {
            let wait = pacing.wait(now: clock.monotonicMilliseconds())
            if wait > 0 { sleep(wait) }
            pacing.asked(at: clock.monotonicMilliseconds())
            let answer = client.fetch(accepted.report, now: clock.nowMs())
            switch ReportLookupAnswer.classify(
                status: answer.status, body: answer.body, retryAfter: answer.retryAfter, now: clock.nowMs(),
                transportError: answer.transportError)
            {
            case .held(let copy):
                pacing.answered()
                guard let copy else { return .checked(.notJSON(String(answer.body.prefix(200)))) }
                guard let sent = try? JSONValue.parse(Array(accepted.report.body.utf8)) else {
                    return .checked(.unreadable("the outbox's body of this report is not JSON"))
                }
                let differences = ReportComparison.differences(sent: sent, held: copy)
                return .checked(differences.isEmpty ? .matches : .differs(differences))
            case .notHeld:
                pacing.answered()
                return .checked(.notHeld)
            case .unauthorized:
                return .stop(.unauthorized("HTTP \(answer.status ?? 401) \(answer.body.prefix(200))"))
            case .unreadable(let reason):
                pacing.answered()
                return .checked(.unreadable(reason))
            case .retry(let afterMs, let reason):
                pacing.failed(at: clock.monotonicMilliseconds(), retryAfterMs: afterMs)
                why = reason
            }
        }
        return .stop(.gaveUp("Apple failed \(VerifyPacing.triesPerReport) times in a row (last: \(why))"))
    }
}
