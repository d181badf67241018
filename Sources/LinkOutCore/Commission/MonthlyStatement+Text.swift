/// The statement as JSON (the command's `--format json` and the admin listener's `/api/statement`) and as
/// CSV, amounts in integer milli-units of each row's currency, rates as decimals.
extension MonthlyStatement {
    /// `{"month", "rows": [...], "sandboxTokens", "inAppWithoutTerms"}`, and `"lines": [...]` when asked.
    public func json(lines withLines: Bool) -> JSONValue {
        var members: [JSONValue.Member] = [
            .init(key: "month", value: .string(month.description)),
            .init(
                key: "rows",
                value: .array(
                    rows.map { row in
                        .object([
                            .init(key: "bundleId", value: .string(row.bundleId)),
                            .init(key: "region", value: row.region.map(JSONValue.string) ?? .null),
                            .init(key: "kind", value: .string(row.kind.rawValue)),
                            .init(key: "currency", value: row.currency.map(JSONValue.string) ?? .null),
                            .init(key: "tokens", value: .integer(row.tokens)),
                            .init(key: "tokensVisited", value: .integer(row.tokensVisited)),
                            .init(key: "tokensPurchased", value: .integer(row.tokensPurchased)),
                            .init(key: "salesInWindow", value: .integer(row.salesInWindow)),
                            .init(key: "salesOutsideWindow", value: .integer(row.salesOutsideWindow)),
                            .init(key: "commission", value: .integer(row.commission)),
                            .init(key: "taps", value: .integer(row.taps)),
                        ])
                    })),
            .init(key: "sandboxTokens", value: .integer(sandboxTokens)),
            .init(key: "inAppWithoutTerms", value: .array(inAppWithoutTerms.map(JSONValue.string))),
        ]
        if withLines {
            members.append(
                .init(
                    key: "lines",
                    value: .array(
                        lines.map { line in
                            .object([
                                .init(key: "bundleId", value: .string(line.bundleId)),
                                .init(key: "region", value: line.region.map(JSONValue.string) ?? .null),
                                .init(key: "kind", value: .string(line.kind.rawValue)),
                                .init(key: "externalPurchaseId", value: .string(line.externalPurchaseId)),
                                .init(key: "lineItemId", value: .string(line.lineItemId)),
                                .init(key: "eventType", value: .string(line.eventType)),
                                .init(key: "tapAt", value: .integer(line.tapAt)),
                                .init(key: "createdAt", value: .integer(line.createdAt)),
                                .init(key: "inWindow", value: .bool(line.inWindow)),
                                .init(key: "currency", value: .string(line.currency)),
                                .init(key: "amount", value: .integer(line.amount)),
                                .init(key: "rate", value: .string(Self.rate(line.ratePPM))),
                                .init(key: "commission", value: .integer(line.commission)),
                            ])
                        })))
        }
        return .object(members)
    }

    public static let rowsCSVHeader =
        "bundleId,region,kind,currency,tokens,tokensVisited,tokensPurchased,salesInWindow,salesOutsideWindow,commission,taps"
    public static let linesCSVHeader =
        "bundleId,region,kind,externalPurchaseId,lineItemId,eventType,tapAt,createdAt,inWindow,currency,amount,rate,commission"

    /// The rows, or the lines, as CSV with a header (RFC 4180 quoting).
    public func csv(lines withLines: Bool) -> String {
        var out = (withLines ? Self.linesCSVHeader : Self.rowsCSVHeader) + "\n"
        if withLines {
            for line in lines {
                out +=
                    [
                        line.bundleId, line.region ?? "", line.kind.rawValue, line.externalPurchaseId, line.lineItemId, line.eventType,
                        UTCDate.format(milliseconds: line.tapAt),
                        UTCDate.format(milliseconds: line.createdAt), line.inWindow ? "true" : "false", line.currency, String(line.amount),
                        Self.rate(line.ratePPM), String(line.commission),
                    ].map(TokenExportFormat.csvField).joined(separator: ",") + "\n"
            }
        } else {
            for row in rows {
                out +=
                    [
                        row.bundleId, row.region ?? "", row.kind.rawValue, row.currency ?? "", String(row.tokens),
                        String(row.tokensVisited), String(row.tokensPurchased),
                        String(row.salesInWindow), String(row.salesOutsideWindow), String(row.commission), String(row.taps),
                    ].map(TokenExportFormat.csvField).joined(separator: ",") + "\n"
            }
        }
        return out
    }

    /// Parts per million as a decimal: 150000 is `0.15`.
    public static func rate(_ ppm: Int64) -> String {
        let fraction = String(ppm % 1_000_000)
        var digits = String(repeating: "0", count: 6 - fraction.count) + fraction
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(ppm / 1_000_000)" + (digits.isEmpty ? "" : ".\(digits)")
    }

    /// Milli-units as the currency's own decimals: 74100 EUR is `74.10`, 500000 JPY is `500`; a converted
    /// amount finer than the currency's unit keeps its thousandths.
    public static func amount(_ milli: Int64, currency: String) -> String {
        let digits = CurrencyCodes.minorUnitDigits(currency)
        let sign = milli < 0 ? "-" : ""
        let magnitude = milli.magnitude
        let whole = magnitude / 1000
        let thousandths = String(magnitude % 1000)
        var fraction = String(repeating: "0", count: 3 - thousandths.count) + thousandths
        while fraction.count > digits, fraction.hasSuffix("0") { fraction.removeLast() }
        return sign + "\(whole)" + (fraction.isEmpty ? "" : ".\(fraction)")
    }
}
