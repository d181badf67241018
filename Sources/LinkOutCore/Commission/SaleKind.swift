/// Which of a region's commission terms a token's sales are charged under, by the kind of token Apple
/// minted. Apple charges an in-app payment provider's sales on the transaction itself and a link-out's on
/// sales within a window after the tap, at other rates (the EU's and Japan's terms), so a statement that
/// charged every token as a link-out would bill `IN_APP` sales wrongly.
public enum SaleKind: String, Sendable, Equatable, CaseIterable {
    /// A link-out: a plist link's token (no `tokenType`, StoreKit appended it on the way out), and the
    /// custom-link types that send the shopper out of the app (`ACQUISITION`, `SERVICES`, `LINK_OUT`,
    /// iOS 27.2's `outOfApp`).
    case linkOut
    /// An in-app payment provider: `IN_APP`, and iOS 27.2's `withinApp`.
    case inApp

    /// The kind of a token by its `tokenType` as stored. iOS 27.2's typed kinds have no published wire
    /// strings yet, so `withinApp` is matched however it is spelt in the shape a type may take
    /// (`WITHIN_APP`, `WITHINAPP`). A type no one has documented is charged as a link-out, as every token
    /// was before kinds were told apart; the gateway counts such tokens as unusual, for someone to look at.
    public init(tokenType: String?) {
        guard let tokenType else {
            self = .linkOut
            return
        }
        let folded = String(tokenType.uppercased().filter { $0 != "_" })
        self = Self.inAppTypes.contains(folded) ? .inApp : .linkOut
    }

    /// `tokenType`s of in-app payment providers, upper case without underscores.
    private static let inAppTypes: Set<String> = ["INAPP", "WITHINAPP"]
}
