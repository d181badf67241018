/// The body of one report to Apple, made from the lines the store keeps.
public enum ReportBody {
    /// A stored line as it goes into a report: its JSON as the checkout sent it, and whether Apple already
    /// holds an earlier version of it (then it goes as a restatement, which replaces that one).
    public struct Line: Sendable, Equatable {
        public var json: String
        public var acceptedBefore: Bool

        public init(json: String, acceptedBefore: Bool) {
            self.json = json
            self.acceptedBefore = acceptedBefore
        }
    }

    /// `lines` go only into a `LINE_ITEM` report: Apple refuses line items with any other status.
    public static func make(
        requestIdentifier: String, externalPurchaseId: String, status: ExternalPurchaseReportStatus, lines: [Line]
    ) -> String {
        let report = ExternalPurchaseReport(
            requestIdentifier: requestIdentifier, externalPurchaseId: externalPurchaseId, status: status,
            lineItems: status == .lineItem ? lines.compactMap(lineItem) : [])
        return String(decoding: report.json, as: UTF8.self)
    }

    /// The line as Apple must receive it. Whether it is a restatement is decided by what Apple holds, not by
    /// the checkout's flag: a line restated before its first report went out is simply sent as it is now.
    /// nil for a withdrawal of a line Apple never took: there is nothing to withdraw.
    static func lineItem(_ line: Line) -> LineItem? {
        guard var item = try? LineItem(json: Array(line.json.utf8)) else { return nil }
        if item.erroneouslySubmitted == true, !line.acceptedBefore { return nil }
        item.restatement = line.acceptedBefore ? true : nil
        return item
    }

    /// Whether any of `lines` goes into a report: a report whose every line is a withdrawal of something
    /// Apple never took has nothing to say.
    public static func hasSendableLines(_ lines: [Line]) -> Bool {
        lines.contains { lineItem($0) != nil }
    }
}
