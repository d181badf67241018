import ArgumentParser
import Foundation
import LinkOutCore
import LinkOutServer
import LinkOutStore

/// `linkout statement`: what is owed to Apple for a month, by app, region and currency, with every line
/// it was computed from on request (`MonthlyStatement` holds the rules).
struct Statement: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "A month's statement (UTC): tokens created, sales the terms charge (within the window after each tap for a link-out, every one for in-app) and the others, and Apple's commission, by app, region, kind and currency."
    )

    @OptionGroup var config: ConfigOption

    @OptionGroup var storeOption: StoreOption

    @Option(help: ArgumentHelp("The month, in UTC.", valueName: "YYYY-MM"))
    var month: String

    @Option(help: ArgumentHelp("One app only.", valueName: "bundle-id"))
    var app: String?

    @Option(help: "text, csv or json (amounts in integer milli-units in csv and json).")
    var format: String = "text"

    @Flag(
        help: "Every line item of the month, with its token, tap, date, window, amount, rate and commission, to re-add the totals by hand.")
    var lines = false

    func validate() throws {
        if UTCMonth(month) == nil { throw ValidationError("--month must be a month as YYYY-MM, such as 2026-10") }
        if !["text", "csv", "json"].contains(format) { throw ValidationError("--format must be text, csv or json") }
    }

    func run() throws {
        let loaded = try config.load()
        if let app, !loaded.apps.contains(where: { $0.bundleId == app }) {
            printError("error: --app \(app) is not one of the config's apps (\(loaded.apps.map(\.bundleId).joined(separator: ", ")))")
            throw ExitCode(1)
        }
        let statement: MonthlyStatement
        do {
            let reporting = try openReportingStore(storeOption.location(loaded))
            statement = try reporting.statement(UTCMonth(month)!, app: app, config: loaded)
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        if loaded.commission.regions.isEmpty {
            printError(
                "warning: \(config.config) has no commission regions: every token's region is none and no commission is computed (docs/reporting.md: The monthly statement)"
            )
        }
        for region in statement.inAppWithoutTerms {
            printError(
                "warning: region \(region) has in-app sales (IN_APP tokens) but no commission.regions[].inApp terms: they are charged nothing here (docs/reporting.md: The monthly statement)"
            )
        }
        switch format {
        case "json": print(statement.json(lines: lines).text)
        case "csv": print(statement.csv(lines: lines), terminator: "")
        default: print(StatementText.table(statement, lines: lines), terminator: "")
        }
    }
}

/// The statement as tables for people: amounts in each currency's own decimals.
enum StatementText {
    static func table(_ statement: MonthlyStatement, lines: Bool) -> String {
        var out =
            "statement \(statement.month) (UTC): tokens by creation; sales by line item date, tax exclusive, net of refunds, in each line's reporting currency; commission at each app's tier, on a link-out's sales within the window after the tap, on every in-app sale\n\n"
        let withTaps = statement.rows.contains { $0.taps > 0 }
        let header =
            ["app", "region", "kind", "currency", "tokens", "visited", "purchased", "sales in window", "sales outside", "commission"]
            + (withTaps ? ["taps"] : [])
        var rows = [header]
        for row in statement.rows {
            let currency = row.currency ?? "-"
            let amount = { (value: Int64) in row.currency.map { MonthlyStatement.amount(value, currency: $0) } ?? "-" }
            rows.append(
                [
                    row.bundleId.isEmpty ? "(no app)" : row.bundleId, row.region ?? "(none)", row.kind.rawValue, currency,
                    String(row.tokens),
                    String(row.tokensVisited), String(row.tokensPurchased), amount(row.salesInWindow), amount(row.salesOutsideWindow),
                    amount(row.commission),
                ] + (withTaps ? [String(row.taps)] : []))
        }
        if statement.rows.isEmpty { rows.append(["(no tokens and no sales this month)"] + Array(repeating: "", count: header.count - 1)) }
        out += aligned(rows, leftColumns: 4)
        if statement.rows.contains(where: { $0.currency != nil }) {
            out += "\n(tokens and visited are each region's, repeated on its currency rows)\n"
        }
        if !statement.inAppWithoutTerms.isEmpty {
            out +=
                "\n(in-app sales in \(statement.inAppWithoutTerms.joined(separator: ", ")) charged nothing: the region has no inApp terms)\n"
        }
        if statement.sandboxTokens > 0 {
            out +=
                "\n(\(statement.sandboxTokens) sandbox token(s) of the month left out, with their line items: a test purchase owes nothing)\n"
        }
        if lines {
            out +=
                "\nline items (commission per line, rounded half away from zero to the currency's smallest unit; the rows are their sums):\n"
            var table = [
                [
                    "app", "region", "kind", "token", "line item", "event", "tap", "created", "window", "currency", "amount", "rate",
                    "commission",
                ]
            ]
            for line in statement.lines {
                table.append([
                    line.bundleId, line.region ?? "(none)", line.kind.rawValue, line.externalPurchaseId, line.lineItemId, line.eventType,
                    UTCDate.format(milliseconds: line.tapAt), UTCDate.format(milliseconds: line.createdAt),
                    line.kind == .inApp && line.inWindow ? "none" : line.inWindow ? "in" : "outside",
                    line.currency, MonthlyStatement.amount(line.amount, currency: line.currency), MonthlyStatement.rate(line.ratePPM),
                    MonthlyStatement.amount(line.commission, currency: line.currency),
                ])
            }
            out += aligned(table, leftColumns: 10)
        }
        return out
    }

    /// Columns padded to their widest cell: the first `leftColumns` to the left, numbers to the right.
    static func aligned(_ rows: [[String]], leftColumns: Int) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).enumerated().map { index, cell in
                index < leftColumns
                    ? cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: cell.1 - cell.0.count) + cell.0
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
