/// Whether a link's shoppers arrive with a StoreKit token (`links[].token`).
public enum TokenExpectation: String, Sendable, Equatable, CaseIterable {
    /// The default: the link is an Info.plist URL StoreKit appends a token to, and a request without one is
    /// refused (or sent on, `onInvalidToken: redirect`) as a broken link-out.
    case required
    /// The link carries no token: a US storefront link (no entitlement and no token since 2025) or any link
    /// an app opens without StoreKit. A request without a token is a tap, sent on and recorded as one
    /// (`UntokenedReason.tap`), never a refusal. A token that arrives anyway is handled as on any link.
    /// (Not `none`, which an optional's `.none` would shadow.)
    case notExpected = "none"
}
