/// The body of Apple's Send External Purchase Report (`PUT /externalPurchase/v1/reports`).
public struct ExternalPurchaseReport: Sendable, Equatable {
    /// A lowercase UUID, one per report: a resend of a failed report keeps it, a correction gets a new one.
    public var requestIdentifier: String
    public var externalPurchaseId: String
    public var status: ExternalPurchaseReportStatus
    /// Only with `.lineItem`, and then at least one: Apple refuses the body otherwise.
    public var lineItems: [LineItem]

    /// `lineItems` must be non-empty exactly when `status` is `.lineItem`: a report that breaks this is
    /// a programming error, not something a checkout sent.
    public init(requestIdentifier: String, externalPurchaseId: String, status: ExternalPurchaseReportStatus, lineItems: [LineItem] = []) {
        precondition((status == .lineItem) == !lineItems.isEmpty, "a LINE_ITEM report needs line items, other reports none")
        self.requestIdentifier = requestIdentifier
        self.externalPurchaseId = externalPurchaseId
        self.status = status
        self.lineItems = lineItems
    }

    /// The body as canonical JSON (UTF-8): fields in the order of Apple's documentation, line items as
    /// `LineItem.json` writes them, `lineItems` left out unless the status is LINE_ITEM.
    public var json: [UInt8] {
        var out = JSONObjectWriter()
        out.string("requestIdentifier", requestIdentifier)
        out.string("externalPurchaseId", externalPurchaseId)
        out.string("status", status.rawValue)
        if status == .lineItem {
            out.raw("lineItems", "[" + lineItems.map(\.jsonText).joined(separator: ",") + "]")
        }
        return Array(out.text.utf8)
    }
}
