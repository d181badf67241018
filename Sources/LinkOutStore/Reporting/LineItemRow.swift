import LinkOutCore

/// A line item as stored: its JSON as the checkout sent it, the token it belongs to, its revision (1, then
/// one more per restatement) and the revision Apple accepted (0: none yet).
public struct LineItemRow: Sendable, Equatable {
    public var lineItemId: String
    public var externalPurchaseId: String
    public var json: String
    public var revision: Int64
    public var acceptedRevision: Int64

    public init(lineItemId: String, externalPurchaseId: String, json: String, revision: Int64, acceptedRevision: Int64) {
        self.lineItemId = lineItemId
        self.externalPurchaseId = externalPurchaseId
        self.json = json
        self.revision = revision
        self.acceptedRevision = acceptedRevision
    }
}

/// A line to store: new, or replacing the stored line of the same id (a restatement).
public struct LineItemWrite: Sendable, Equatable {
    public var lineItemId: String
    public var json: String

    public init(lineItemId: String, json: String) {
        self.lineItemId = lineItemId
        self.json = json
    }
}

public struct LineItemStoreResult: Sendable, Equatable {
    /// Lines stored for the first time, and lines replaced.
    public var added: [String] = []
    public var restated: [String] = []
    /// Lines sent again exactly as stored: nothing changed.
    public var unchanged: [String] = []

    public init() {}
}
