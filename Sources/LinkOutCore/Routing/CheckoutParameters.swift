/// Per link: what linkout adds to the destination's query, and which of the shopper's own parameters
/// (campaign tags such as `utm_source`) it passes on.
public struct CheckoutParameters: Sendable, Equatable {
    /// `externalPurchaseId=…`: on by default, it is how the checkout ties a purchase to the token.
    public var externalPurchaseId = true
    /// The query parameter the id travels in (`externalPurchaseIdAs`): `externalPurchaseId` unless the
    /// destination expects another name, such as a Stripe Payment Link's `client_reference_id`, which
    /// Stripe copies onto the Checkout Session, so a Payment Link needs no checkout code at all.
    public var externalPurchaseIdName = "externalPurchaseId"
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

    /// The names a pass-through may not take on this link: linkout's own and the id's name.
    public var takenNames: Set<String> { Self.reservedNames.union([externalPurchaseIdName]) }

    /// A Stripe Payment Link keeps `client_reference_id` only when it is 1 to 200 letters, digits, `-` and
    /// `_` (docs.stripe.com/payment-links/url-parameters), and drops any other value silently. Every
    /// externalPurchaseId linkout passes on (a UUID, after `SANDBOX`, `SANDBOX_` or `SANDBOX-`, validated
    /// by `ExternalPurchaseID`) is such a value, so no id is ever lost on the way.
    public static func isPaymentLinkReference(_ value: String) -> Bool {
        (1...200).contains(value.utf8.count)
            && value.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    /// The names linkout itself may add, which a pass-through parameter can never take over.
    public static let reservedNames: Set<String> = [
        "externalPurchaseId", "externalPurchaseToken", "bundleId", "linkoutRef", "country", "link",
    ]
}
