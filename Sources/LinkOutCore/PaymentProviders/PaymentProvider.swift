/// The payment providers whose webhooks linkout reads: a checkout's own provider tells linkout what a
/// shopper bought, so no glue code has to post line items to `/v1/line-items`.
public enum PaymentProvider: String, Sendable, CaseIterable, Comparable {
    case stripe
    case paddle

    /// The header carrying the webhook's signature.
    public var signatureHeader: String {
        switch self {
        case .stripe: "Stripe-Signature"
        case .paddle: "Paddle-Signature"
        }
    }

    /// The start of every line item id made from this provider's objects (`stripe:cs_…`, `paddle:txn_…`):
    /// ids of one provider never meet another's or a checkout's own.
    public var lineItemPrefix: String { rawValue + ":" }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
