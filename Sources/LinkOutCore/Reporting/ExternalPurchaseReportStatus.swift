/// A report's `status`: what the token led to.
public enum ExternalPurchaseReportStatus: String, Sendable, Equatable, CaseIterable {
    /// Transactions, in `lineItems`.
    case lineItem = "LINE_ITEM"
    /// The shopper bought nothing. Impossible once a token had a LINE_ITEM report.
    case noLineItem = "NO_LINE_ITEM"
    /// A notification named a token linkout never saw.
    case unrecognizedToken = "UNRECOGNIZED_TOKEN"
    /// Custom-link tokens only: the customer's transactions are reported under another active token.
    case duplicateToken = "DUPLICATE_TOKEN"
}
