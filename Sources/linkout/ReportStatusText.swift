import Foundation
import LinkOutCore
import LinkOutStore

/// `report status` as a table for people and as JSON for scripts.
enum ReportStatusText {
    static let columns = ["app", "environment", "waiting", "due", "sending", "reported", "failed", "past day 7", "past day 10"]

    static func table(_ summary: ReportStatusSummary, failed: [FailedReport], notifications: [StoredNotification] = []) -> String {
        var rows = [columns]
        for row in summary.rows {
            rows.append([row.bundleId, row.environment] + counts(row).map(String.init))
        }
        if summary.rows.isEmpty { rows.append(["(no tokens yet)"] + Array(repeating: "", count: columns.count - 1)) }
        let widths = columns.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var out = ""
        for row in rows {
            out += zip(row, widths).enumerated().map { index, cell in
                index < 2 ? cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: cell.1 - cell.0.count) + cell.0
            }.joined(separator: "  ") + "\n"
        }
        let reports = ["pending", "sending", "accepted", "failed"].map { "\(summary.reports[$0] ?? 0) \($0)" }.joined(separator: ", ")
        out += "\nreports: \(reports)\n"
        if !failed.isEmpty {
            out += "\nfailed reports (newest first; correct the line items to send them again):\n"
            for report in failed {
                out += "  \(report.requestIdentifier)  \(report.externalPurchaseId)  \(report.status)  \(report.answer)\n"
            }
        }
        if !summary.notifications.isEmpty {
            out += "\nnotifications from Apple:\n"
            for count in summary.notifications {
                out += "  \(count.count)  \(count.type)\(count.subtype.isEmpty ? "" : " / \(count.subtype)")  \(count.outcome)\n"
            }
            if summary.reminded > 0 {
                out += "  \(summary.reminded) token(s) Apple reminded of before linkout reported them: check reporting.noPurchaseAfterHours and the reporter\n"
            }
            out += "\nlatest notifications (newest first):\n"
            for notification in notifications {
                out += "  \(notification.notificationUUID)  \(notification.notificationType)  \(notification.subtype ?? "-")  signed \(notification.signedDate)  \(notification.externalPurchaseId ?? "-")  \(notification.outcome)\n"
            }
        }
        return out
    }

    static func json(_ summary: ReportStatusSummary, failed: [FailedReport], notifications: [StoredNotification] = []) -> String {
        let apps = summary.rows.map { row -> JSONValue in
            var members: [JSONValue.Member] = [
                .init(key: "bundleId", value: .string(row.bundleId)), .init(key: "environment", value: .string(row.environment)),
            ]
            for (name, count) in zip(["waiting", "due", "sending", "reported", "failed", "pastDay7", "pastDay10"], counts(row)) {
                members.append(.init(key: name, value: .integer(count)))
            }
            return .object(members)
        }
        let reports = JSONValue.object(["pending", "sending", "accepted", "failed"].map { .init(key: $0, value: .integer(summary.reports[$0] ?? 0)) })
        let failures = failed.map { report -> JSONValue in
            .object([
                .init(key: "requestIdentifier", value: .string(report.requestIdentifier)),
                .init(key: "externalPurchaseId", value: .string(report.externalPurchaseId)),
                .init(key: "status", value: .string(report.status)),
                .init(key: "answer", value: .string(report.answer)),
                .init(key: "finishedAt", value: .integer(report.finishedAt)),
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
            .init(key: "apps", value: .array(apps)), .init(key: "reports", value: reports), .init(key: "failed", value: .array(failures)),
            .init(key: "notifications", value: .object([
                .init(key: "counts", value: .array(notificationCounts)), .init(key: "reminded", value: .integer(summary.reminded)),
                .init(key: "latest", value: .array(latest)),
            ])),
        ]).text + "\n"
    }

    private static func counts(_ row: ReportStatusSummary.Row) -> [Int64] {
        [row.waiting, row.due, row.sending, row.reported, row.failed, row.unreportedPastDay7, row.unreportedPastDay10]
    }
}
