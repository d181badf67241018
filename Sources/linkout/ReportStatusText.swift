import Foundation
import LinkOutCore
import LinkOutStore

/// `report status` as a table for people and as JSON for scripts.
enum ReportStatusText {
    static let columns = ["app", "environment", "waiting", "due", "sending", "retrying", "reported", "failed", "past day 7", "past day 10"]

    /// Whether this store's reports are sent at all: the config's `reporting` section, named by the file.
    enum Reporting: Equatable {
        case on
        case off(config: String)
    }

    /// The first line: whether anything is sent, and whether sending is paused.
    static func stateLine(_ summary: ReportStatusSummary, reporting: Reporting, now: Int64) -> String {
        let tokens = summary.rows.reduce(Int64(0)) { $0 + $1.waiting + $1.due + $1.sending + $1.retrying + $1.failed }
        switch reporting {
        case .off(let config):
            return
                "reporting: OFF: \(config) has no reporting section, so nothing is sent to Apple; \(tokens) token(s) recorded are not reported"
                + " (Apple expects every one reported: see docs/reporting.md)\n"
        case .on:
            if let until = summary.health.pausedUntil {
                return
                    "reporting: PAUSED until \(time(until, now: now)): Apple refused the key (401); check reporting.keyFile, keyId, issuerId and the apps' bundle IDs\n"
            }
            return "reporting: on\n"
        }
    }

    /// `2026-11-26T03:10:00.000Z (in 4 min)`.
    static func time(_ ms: Int64, now: Int64) -> String {
        let seconds = (ms - now) / 1000
        let span = abs(seconds) < 120 ? "\(abs(seconds)) s" : abs(seconds) < 7200 ? "\(abs(seconds) / 60) min" : "\(abs(seconds) / 3600) h"
        return UTCDate.format(milliseconds: ms) + (seconds >= 0 ? " (in \(span))" : " (\(span) ago)")
    }

    static func table(
        _ summary: ReportStatusSummary, failed: [FailedReport], notifications: [StoredNotification] = [], reporting: Reporting = .on,
        months: [MonthClose.State] = [], now: Int64 = 0, providers: ProviderEventCounts? = nil, history: [HistoryReading]? = nil,
        refused: (count: Int64, months: [UTCMonth]) = (0, [])
    ) -> String {
        var out = stateLine(summary, reporting: reporting, now: now) + "\n"
        var rows = [columns]
        for row in summary.rows {
            rows.append([row.bundleId, row.environment] + counts(row).map(String.init))
        }
        if summary.rows.isEmpty { rows.append(["(no tokens yet)"] + Array(repeating: "", count: columns.count - 1)) }
        let widths = columns.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            out +=
                zip(row, widths).enumerated().map { index, cell in
                    index < 2
                        ? cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
                        : String(repeating: " ", count: cell.1 - cell.0.count) + cell.0
                }.joined(separator: "  ") + "\n"
        }
        let health = summary.health
        let reports = zip(outboxNames, outbox(health)).map { "\($1) \($0.replacingOccurrences(of: "_", with: " "))" }.joined(
            separator: ", ")
        out += "\nreports: \(reports)" + (health.open > 0 ? health.nextTryAt.map { "; next try \(time($0, now: now))" } ?? "" : "") + "\n"
        out += "backlog: \(health.backlog.text(now: now))\n"
        if !health.waiting.isEmpty {
            out += "\nwaiting to be sent again (soonest first; the same requestIdentifier each time):\n"
            for report in health.waiting {
                let failures = report.failures == 1 ? "1 failure" : "\(report.failures) failures"
                out +=
                    "  \(report.requestIdentifier)  \(report.externalPurchaseId)  \(report.status)  sent \(report.attempts)x (\(failures))"
                    + "  next try \(time(report.nextAttemptAt, now: now))\n"
                out +=
                    "    last: \(report.lastAnswer.isEmpty ? "no answer yet (its sender stopped)" : String(report.lastAnswer.prefix(300)))"
                    + (report.lastAttemptAt.map { " (\(time($0, now: now)))" } ?? "") + "\n"
            }
        }
        if !months.isEmpty {
            out += "\n" + monthClose(months)
            if let history {
                out += historyNote(months, history: history)
            }
        }
        if !failed.isEmpty {
            // Of every refused report, not only those listed.
            let months = refused.months.map(\.description)
            let shown = Int64(failed.count) < refused.count ? "; \(refused.count) in all, the newest \(failed.count) here" : ""
            out +=
                "\nreports Apple refused (newest first\(shown); each holds its token unreported"
                + (months.isEmpty ? "" : ", and months \(months.joined(separator: ", ")) open") + "):\n"
            for report in failed {
                let refusals = report.refusals == 1 ? "refused once" : "refused \(report.refusals)x"
                let next =
                    report.retryAt.map { "sent again on its own at \(time($0, now: now))" }
                    ?? (report.status == ExternalPurchaseReportStatus.lineItem.rawValue
                        ? "not sent again on its own: correct its line items (a restatement), or send it as it is"
                        : "not sent again on its own any more: send it again with linkout report retry")
                out +=
                    "  \(report.requestIdentifier)  \(report.externalPurchaseId)  \(report.status)  \(report.month)  \(refusals); \(next)\n"
                out += "    Apple: \(report.answer.prefix(300))\n"
            }
            out += "  send them again now: linkout report retry --all (or one requestIdentifier, or --month YYYY-MM)\n"
        }
        if !summary.notifications.isEmpty {
            out += "\nnotifications from Apple:\n"
            for count in summary.notifications {
                out += "  \(count.count)  \(count.type)\(count.subtype.isEmpty ? "" : " / \(count.subtype)")  \(count.outcome)\n"
            }
            if summary.reminded > 0 {
                out +=
                    "  \(summary.reminded) token(s) Apple reminded of before linkout reported them: check reporting.noPurchaseAfterHours and the reporter\n"
            }
            out += "\nlatest notifications (newest first):\n"
            for notification in notifications {
                out +=
                    "  \(notification.notificationUUID)  \(notification.notificationType)  \(notification.subtype ?? "-")  signed \(notification.signedDate)  \(notification.externalPurchaseId ?? "-")  \(notification.outcome)\n"
            }
        }
        if let history {
            out += "\nApple's notification history (read back at start-up and daily, for notifications missed while linkout was down):\n"
            for reading in history {
                out +=
                    "  \(reading.bundleId) \(reading.environment.rawValue): "
                    + (reading.mark.map {
                        "read up to \(UTCDate.format(milliseconds: $0.coveredUntil)), last \(time($0.checkedAt, now: now))"
                    }
                        ?? "never read (serve reads it at start-up; the log says why a read failed)") + "\n"
            }
        }
        if let providers { out += "\n" + providers.text }
        return out
    }

    /// Under month close: the closed months that may still gain a token linkout never saw, because Apple's
    /// notification history has not been read past their tokens' day-10 notices (`MonthClose.historyCovers`).
    static func historyNote(_ months: [MonthClose.State], history: [HistoryReading]) -> String {
        let readUntil = HistoryReading.productionReadUntil(history)
        let open = months.filter { $0.closed && !MonthClose.historyCovers($0.month, historyReadUntil: readUntil) }.map(\.month.description)
        guard !open.isEmpty else { return "" }
        return "  closed as far as linkout knows; Apple's notification history is not yet read past day 10 of the next month for "
            + open.joined(separator: ", ") + ", so a token linkout never saw may still come (an UNREPORTED notification)\n"
    }

    /// One app's and environment's reading of Apple's notification history, nil when never read.
    struct HistoryReading {
        var bundleId: String
        var environment: TokenEnvironment
        var mark: NotificationHistoryMark?

        /// How far every app's production history has been read (the least of them; 0 while one never was).
        static func productionReadUntil(_ readings: [HistoryReading]) -> Int64 {
            readings.filter { $0.environment == .production }.map { $0.mark?.coveredUntil ?? 0 }.min() ?? 0
        }

        /// Every configured app in both environments, with what the store says of each.
        static func all(apps: [AllowedApp], marks: [NotificationHistoryMark]) -> [HistoryReading] {
            Array(Set(apps.map(\.bundleId))).sorted().flatMap { bundleId in
                [TokenEnvironment.production, .sandbox].map { environment in
                    HistoryReading(
                        bundleId: bundleId, environment: environment,
                        mark: marks.first { $0.bundleId == bundleId && $0.environment == environment })
                }
            }
        }
    }

    /// Month close: each month's tokens (by creation, UTC) against their accepted reports, by the deadline.
    static func monthClose(_ months: [MonthClose.State]) -> String {
        var rows = [["month", "tokens", "reported", "outstanding", "deadline", "days left", ""]]
        for month in months {
            let deadline = String(UTCDate.format(milliseconds: month.deadline - 1).prefix(10))
            let note = month.closed ? "closed" : month.daysLeft <= 0 ? "OVERDUE" : month.atRisk ? "due soon" : ""
            rows.append([
                month.month.description, String(month.tokens), String(month.reported), String(month.outstanding), deadline,
                month.closed ? "" : String(month.daysLeft), note,
            ])
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var out = "month close (every token created in a month reported by its deadline, UTC):\n"
        for row in rows {
            out +=
                "  "
                + zip(row, widths).enumerated().map { index, cell in
                    [0, 4, 6].contains(index)
                        ? cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
                        : String(repeating: " ", count: cell.1 - cell.0.count) + cell.0
                }.joined(separator: "  ").trimmingCharacters(in: .whitespaces) + "\n"
        }
        return out
    }

    /// The outbox's counts, in the order of `outboxNames`.
    static let outboxNames = ["to_send", "sending", "retrying", "accepted", "failed"]
    static func outbox(_ health: ReporterHealth) -> [Int64] {
        [health.toSend, health.sending, health.retrying, health.accepted, health.failed]
    }

    static func json(
        _ summary: ReportStatusSummary, failed: [FailedReport], notifications: [StoredNotification] = [], reporting: Reporting = .on,
        months: [MonthClose.State] = [], providers: ProviderEventCounts? = nil, history: [HistoryReading]? = nil,
        refused: (count: Int64, months: [UTCMonth]) = (0, []), now: Int64 = 0
    ) -> String {
        let apps = summary.rows.map { row -> JSONValue in
            var members: [JSONValue.Member] = [
                .init(key: "bundleId", value: .string(row.bundleId)), .init(key: "environment", value: .string(row.environment)),
            ]
            for (name, count) in zip(["waiting", "due", "sending", "retrying", "reported", "failed", "pastDay7", "pastDay10"], counts(row))
            {
                members.append(.init(key: name, value: .integer(count)))
            }
            return .object(members)
        }
        let health = summary.health
        let reports = JSONValue.object(
            zip(["toSend", "sending", "retrying", "accepted", "failed"], outbox(health)).map {
                .init(key: $0, value: .integer($1))
            })
        let waiting = health.waiting.map { report -> JSONValue in
            .object([
                .init(key: "requestIdentifier", value: .string(report.requestIdentifier)),
                .init(key: "externalPurchaseId", value: .string(report.externalPurchaseId)),
                .init(key: "bundleId", value: .string(report.bundleId)),
                .init(key: "status", value: .string(report.status)),
                .init(key: "attempts", value: .integer(report.attempts)),
                .init(key: "failures", value: .integer(report.failures)),
                .init(key: "lastStatus", value: report.lastStatus.map(JSONValue.integer) ?? .null),
                .init(key: "lastAnswer", value: .string(report.lastAnswer)),
                .init(key: "lastAttemptAt", value: report.lastAttemptAt.map(JSONValue.integer) ?? .null),
                .init(key: "nextAttemptAt", value: .integer(report.nextAttemptAt)),
            ])
        }
        let backlog = health.backlog
        let reporter = JSONValue.object([
            .init(key: "enabled", value: .bool(reporting == .on)),
            .init(
                key: "backlog",
                value: .object([
                    .init(key: "waiting", value: .integer(backlog.waiting)),
                    .init(key: "perSecond", value: .number(backlog.ratePerSecond)),
                    .init(key: "clearMs", value: backlog.clearMs.map(JSONValue.integer) ?? .null),
                    .init(key: "day10At", value: backlog.day10At.map(JSONValue.integer) ?? .null),
                    .init(key: "passesDay10", value: .bool(backlog.passesDay10(now: now))),
                ])),
            .init(key: "pausedUntil", value: health.pausedUntil.map(JSONValue.integer) ?? .null),
            .init(key: "nextTryAt", value: health.nextTryAt.map(JSONValue.integer) ?? .null),
            .init(
                key: "lastError",
                value: health.lastError.map { error in
                    .object([
                        .init(key: "answer", value: .string(error.answer)), .init(key: "at", value: .integer(error.at)),
                        .init(key: "externalPurchaseId", value: .string(error.externalPurchaseId)),
                    ])
                } ?? .null),
            .init(key: "waiting", value: .array(waiting)),
        ])
        let failures = failed.map { report -> JSONValue in
            .object([
                .init(key: "requestIdentifier", value: .string(report.requestIdentifier)),
                .init(key: "externalPurchaseId", value: .string(report.externalPurchaseId)),
                .init(key: "status", value: .string(report.status)),
                .init(key: "answer", value: .string(report.answer)),
                .init(key: "finishedAt", value: .integer(report.finishedAt)),
                .init(key: "refusals", value: .integer(report.refusals)),
                .init(key: "retryAt", value: report.retryAt.map(JSONValue.integer) ?? .null),
                .init(key: "month", value: .string(report.month.description)),
                .init(key: "environment", value: .string(report.environment.rawValue)),
            ])
        }
        let notificationCounts = summary.notifications.map { count -> JSONValue in
            .object([
                .init(key: "type", value: .string(count.type)), .init(key: "subtype", value: .string(count.subtype)),
                .init(key: "outcome", value: .string(count.outcome)), .init(key: "count", value: .integer(count.count)),
            ])
        }
        let latest = notifications.map { notification -> JSONValue in
            .object([
                .init(key: "notificationUUID", value: .string(notification.notificationUUID)),
                .init(key: "type", value: .string(notification.notificationType)),
                .init(key: "subtype", value: notification.subtype.map(JSONValue.string) ?? .null),
                .init(key: "signedDate", value: .integer(notification.signedDate)),
                .init(key: "externalPurchaseId", value: notification.externalPurchaseId.map(JSONValue.string) ?? .null),
                .init(key: "environment", value: .string(notification.environment)),
                .init(key: "outcome", value: .string(notification.outcome)),
                .init(key: "receivedAt", value: .integer(notification.receivedAt)),
            ])
        }
        return JSONValue.object([
            .init(key: "reporting", value: reporter),
            .init(
                key: "monthClose",
                value: .array(
                    months.map { month in
                        .object([
                            .init(key: "month", value: .string(month.month.description)),
                            .init(key: "tokens", value: .integer(month.tokens)),
                            .init(key: "reported", value: .integer(month.reported)),
                            .init(key: "outstanding", value: .integer(month.outstanding)),
                            .init(key: "deadline", value: .integer(month.deadline)),
                            .init(key: "daysLeft", value: .integer(month.daysLeft)),
                            .init(key: "closed", value: .bool(month.closed)),
                            // Whether Apple's history was read past the month's day-10 notices; null without history.
                            .init(
                                key: "historyCovers",
                                value: history.map { readings in
                                    .bool(
                                        MonthClose.historyCovers(
                                            month.month, historyReadUntil: HistoryReading.productionReadUntil(readings)))
                                } ?? .null),
                        ])
                    })),
            .init(key: "apps", value: .array(apps)), .init(key: "reports", value: reports), .init(key: "failed", value: .array(failures)),
            .init(key: "refusedCount", value: .integer(refused.count)),
            .init(key: "refusedMonths", value: .array(refused.months.map { .string($0.description) })),
            .init(
                key: "notifications",
                value: .object([
                    .init(key: "counts", value: .array(notificationCounts)), .init(key: "reminded", value: .integer(summary.reminded)),
                    .init(key: "latest", value: .array(latest)),
                    .init(
                        key: "history",
                        value: history.map { readings in
                            .array(
                                readings.map { reading in
                                    .object([
                                        .init(key: "bundleId", value: .string(reading.bundleId)),
                                        .init(key: "environment", value: .string(reading.environment.rawValue)),
                                        .init(key: "coveredUntil", value: reading.mark.map { .integer($0.coveredUntil) } ?? .null),
                                        .init(key: "checkedAt", value: reading.mark.map { .integer($0.checkedAt) } ?? .null),
                                    ])
                                })
                        } ?? .null),
                ])),
            .init(key: "paymentProviders", value: providers?.json ?? .null),
        ]).text + "\n"
    }

    private static func counts(_ row: ReportStatusSummary.Row) -> [Int64] {
        [row.waiting, row.due, row.sending, row.retrying, row.reported, row.failed, row.unreportedPastDay7, row.unreportedPastDay10]
    }
}
