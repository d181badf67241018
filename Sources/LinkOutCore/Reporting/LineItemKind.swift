/// The three line items Apple's report knows, told apart by `eventType` and `productType`.
public enum LineItemKind: String, Sendable, Equatable, CaseIterable {
    /// `eventType` BUY, `productType` ONE_TIME_BUY.
    case oneTimeBuy
    /// `eventType` BUY, `productType` SUBSCRIPTION.
    case subscription
    /// `eventType` REFUND, no product fields.
    case refund

    /// Apple's `eventType`.
    public var eventType: String { self == .refund ? "REFUND" : "BUY" }

    /// Apple's `productType`; refunds have none.
    public var productType: String? {
        switch self {
        case .oneTimeBuy: "ONE_TIME_BUY"
        case .subscription: "SUBSCRIPTION"
        case .refund: nil
        }
    }

    /// Whether this is a BUY line (a one-time buy or a subscription).
    public var isBuy: Bool { self != .refund }
}
