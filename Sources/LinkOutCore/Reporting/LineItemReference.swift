/// Which token a submission's line items belong to: Apple's id, or linkout's own reference of the link-out
/// that carried the token (for a checkout that never saw the token itself).
public enum LineItemReference: Sendable, Equatable, Hashable {
    case externalPurchaseId(String)
    case linkoutRef(String)
}
