/// A line item linkout already holds for the app, with the token it was reported under.
public struct StoredLineItem: Sendable, Equatable {
    public var externalPurchaseId: String
    public var lineItem: LineItem

    public init(externalPurchaseId: String, lineItem: LineItem) {
        self.externalPurchaseId = externalPurchaseId
        self.lineItem = lineItem
    }
}
