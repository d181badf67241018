import Foundation
import LinkOutCore
import LinkOutStore

/// `report status` as a table for people and as JSON for scripts.
enum ReportStatusText {
    static let columns = ["app", "environment", "waiting", "due", "sending", "reported", "failed", "past day 7", "past day 10"]

    static func table(_ summary: ReportStatusSummary, failed: [FailedReport]) -> String {
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
        return out
    }

    static func json(_ summary: ReportStatusSummary, failed: [FailedReport]) -> String {
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
        return JSONValue.object([
            .init(key: "apps", value: .array(apps)), .init(key: "reports", value: reports), .init(key: "failed", value: .array(failures)),
        ]).text + "\n"
    }

    private static func counts(_ row: ReportStatusSummary.Row) -> [Int64] {
        [row.waiting, row.due, row.sending, row.reported, row.failed, row.unreportedPastDay7, row.unreportedPastDay10]
    }
}
