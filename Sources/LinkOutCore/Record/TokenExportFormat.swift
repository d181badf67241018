/// Writes stored tokens as JSON lines or CSV, with Apple's field names where Apple has them.
/// Times are Unix milliseconds, the unit of Apple's own date fields.
public enum TokenExportFormat: String, Sendable, CaseIterable {
    case jsonl
    case csv

    public static let columns = [
        "externalPurchaseId", "appAppleId", "bundleId", "tokenCreationDate", "tokenType", "tokenExpirationDate",
        "environment", "link", "country", "destination", "firstSeen", "lastSeen", "hits", "stale",
        "otherVisits", "experiment", "variant", "path", "report", "reportedAs",
    ]

    /// A line to print before the rows, if the format has one.
    public var header: String? {
        switch self {
        case .jsonl: nil
        case .csv: Self.columns.joined(separator: ",")
        }
    }

    public func line(_ token: StoredToken) -> String {
        switch self {
        case .jsonl:
            var fields: [String] = [
                "\"externalPurchaseId\":\(JSONText.quote(token.externalPurchaseId))",
                "\"appAppleId\":\(token.appAppleId)",
                "\"bundleId\":\(JSONText.quote(token.bundleId))",
                "\"tokenCreationDate\":\(token.tokenCreationDate)",
            ]
            if let type = token.tokenType { fields.append("\"tokenType\":\(JSONText.quote(type))") }
            if let expiration = token.tokenExpirationDate { fields.append("\"tokenExpirationDate\":\(expiration)") }
            fields += [
                "\"environment\":\(JSONText.quote(token.environment))",
                "\"link\":\(JSONText.quote(token.link))",
                "\"country\":\(JSONText.quote(token.country))",
                "\"destination\":\(JSONText.quote(token.destination))",
                "\"firstSeen\":\(token.firstSeen)",
                "\"lastSeen\":\(token.lastSeen)",
                "\"hits\":\(token.hits)",
                "\"stale\":\(token.stale)",
                "\"otherVisits\":\(token.otherVisits)",
            ]
            if let experiment = token.experiment { fields.append("\"experiment\":\(JSONText.quote(experiment))") }
            if let variant = token.variant { fields.append("\"variant\":\(JSONText.quote(variant))") }
            if let path = token.path { fields.append("\"path\":\(JSONText.quote(path))") }
            if let report = token.report { fields.append("\"report\":\(JSONText.quote(report))") }
            if let reportedAs = token.reportedAs { fields.append("\"reportedAs\":\(JSONText.quote(reportedAs))") }
            return "{" + fields.joined(separator: ",") + "}"
        case .csv:
            return [
                csvField(token.externalPurchaseId), String(token.appAppleId), csvField(token.bundleId),
                String(token.tokenCreationDate), csvField(token.tokenType ?? ""),
                token.tokenExpirationDate.map(String.init) ?? "", csvField(token.environment),
                csvField(token.link), csvField(token.country), csvField(token.destination),
                String(token.firstSeen), String(token.lastSeen), String(token.hits), String(token.stale),
                String(token.otherVisits), csvField(token.experiment ?? ""), csvField(token.variant ?? ""),
                csvField(token.path ?? ""), csvField(token.report ?? ""), csvField(token.reportedAs ?? ""),
            ].joined(separator: ",")
        }
    }

    private func csvField(_ value: String) -> String { Self.csvField(value) }

    /// RFC 4180 quoting, for every CSV linkout prints. Every exported value was validated on the way in
    /// (ids, allow-listed bundle IDs, config URLs), so quoting is all that is needed.
    public static func csvField(_ value: String) -> String {
        // Bytes, not Characters: "\r\n" is a single Character equal to neither "\r" nor "\n".
        guard value.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }) else {
            return value
        }
        return "\"" + value.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
