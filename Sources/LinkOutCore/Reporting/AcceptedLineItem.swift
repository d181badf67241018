/// A submitted line that passed the cross-line rules, with its position in the submission.
public struct AcceptedLineItem: Sendable, Equatable {
    /// Index in the submitted `lineItems`.
    public var index: Int
    public var lineItem: LineItem
    public var disposition: LineItemDisposition

    public init(index: Int, lineItem: LineItem, disposition: LineItemDisposition) {
        self.index = index
        self.lineItem = lineItem
        self.disposition = disposition
    }
}
