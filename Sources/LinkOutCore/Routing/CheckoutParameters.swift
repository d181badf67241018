/// Per link: what linkout adds to the destination's query, and which of the shopper's own parameters
/// (campaign tags such as `utm_source`) it passes on.
public struct CheckoutParameters: Sendable, Equatable {
    /// `externalPurchaseId=…`: on by default, it is how the checkout ties a purchase to the token.
    public var externalPurchaseId = true
    /// `linkoutRef=…`: a reference signed with the config's signing secret, so the checkout can check
    /// that the visit came through linkout (and so was recorded) and was not made up (`SignedReference`).
    public var signedReference = false
    /// `country=nl`: the country whose destinations were used.
    public var country = false
    /// `link=<id>`.
    public var link = false
    /// `externalPurchaseToken=…`, re-encoded from the validated bytes. Off by default: the raw token
    /// should not reach the checkout's third-party scripts.
    public var token = false
    /// Names of request parameters copied to the Location; `utm_*` matches a prefix.
    public var passThrough: [ParameterPattern] = []

    public init() {}

    /// The names linkout itself may add, which a pass-through parameter can never take over.
    public static let reservedNames: Set<String> = [
        "externalPurchaseId", "externalPurchaseToken", "bundleId", "linkoutRef", "country", "link",
    ]
}
