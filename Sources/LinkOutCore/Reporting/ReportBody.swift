/// The body of one report to Apple (`ExternalPurchaseReport`), made from the lines the store keeps.
public enum ReportBody {
    public enum Status: String, Sendable, CaseIterable {
        case lineItem = "LINE_ITEM"
        case noLineItem = "NO_LINE_ITEM"
        case unrecognizedToken = "UNRECOGNIZED_TOKEN"
        case duplicateToken = "DUPLICATE_TOKEN"
    }

    /// A stored line as it goes into a report: its JSON object as the checkout sent it, and whether Apple
    /// already holds an earlier version of it (then it goes as a restatement, which replaces that one).
    public struct Line: Sendable, Equatable {
        public var json: String
        public var restatement: Bool

        public init(json: String, restatement: Bool) {
            self.json = json
            self.restatement = restatement
        }
    }

    /// `lines` only with `LINE_ITEM`: Apple refuses line items with any other status, and a `LINE_ITEM`
    /// report without them.
    public static func make(requestIdentifier: String, externalPurchaseId: String, status: Status, lines: [Line]) -> String {
        var members: [JSONValue.Member] = [
            .init(key: "requestIdentifier", value: .string(requestIdentifier)),
            .init(key: "externalPurchaseId", value: .string(externalPurchaseId)),
            .init(key: "status", value: .string(status.rawValue)),
        ]
        if status == .lineItem {
            members.append(.init(key: "lineItems", value: .array(lines.compactMap(lineItem))))
        }
        return JSONValue.object(members).text
    }

    /// The line with `restatement` set as linkout knows it: only Apple's acceptance of an earlier version
    /// makes a line a restatement, whatever the checkout wrote. `erroneouslySubmitted` (a withdrawal) is the
    /// checkout's and is kept. nil for a withdrawal of a line Apple never took: there is nothing to withdraw.
    static func lineItem(_ line: Line) -> JSONValue? {
        guard case .object(var members)? = try? JSONValue.parse(Array(line.json.utf8)) else { return nil }
        members.removeAll { $0.key == "restatement" }
        if isWithdrawal(line.json) {
            guard line.restatement else { return nil }
        }
        if line.restatement {
            members.append(.init(key: "restatement", value: .bool(true)))
        }
        return .object(members)
    }

    /// Whether the line withdraws an earlier one (`erroneouslySubmitted: true`).
    public static func isWithdrawal(_ json: String) -> Bool {
        (try? JSONValue.parse(Array(json.utf8)))?[member: "erroneouslySubmitted"] == .bool(true)
    }

    /// Whether any of `lines` goes into a report: a report whose every line is a withdrawal of something
    /// Apple never took has nothing to say.
    public static func hasSendableLines(_ lines: [Line]) -> Bool {
        lines.contains { lineItem($0) != nil }
    }
}
