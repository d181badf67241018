/// One way Apple's stored copy of a report differs from the body linkout sent: a field whose value
/// differs, a field linkout sent that Apple's copy lacks, or one Apple's copy has that linkout never sent.
public struct ReportDifference: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// Both hold the field, with different values.
        case changed
        /// linkout sent it; Apple's copy lacks it.
        case missing
        /// Apple's copy has it; linkout never sent it.
        case extra
    }

    /// Where, in the report: `status`, `lineItems[lineItemId=order-1].taxAmount`, `lineItems[2]` (see
    /// `ReportComparison` for how line items are matched).
    public var path: String
    public var kind: Kind
    /// What linkout sent there (nil for `extra`).
    public var sent: JSONValue?
    /// What Apple holds there (nil for `missing`).
    public var held: JSONValue?

    public init(path: String, kind: Kind, sent: JSONValue?, held: JSONValue?) {
        self.path = path
        self.kind = kind
        self.sent = sent
        self.held = held
    }
}
