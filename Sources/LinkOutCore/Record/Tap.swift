/// What a **tap** is, wherever linkout counts one (the monthly statement's rows, the dashboard's totals and
/// charts): a shopper's request on a link that expects no token (`links[].token: "none"`), recorded as an
/// untokened visit of reason `tap`. Bots, prefetches and HEADs on such links are no one tapping, and a fee
/// Apple may set on taps would not be owed on them: they are counted apart (the dashboard's `tap-bot`),
/// never as taps. One rule, so the dashboard and the statement can never disagree on a month's taps.
public enum Tap {
    /// Whether a recorded untokened visit is a tap.
    public static func isTap(_ visit: UntokenedVisit) -> Bool {
        visit.reason == .tap && visit.kind == .shopper
    }

    /// The same rule on a store's `untokened_visits` columns (`reason`, `kind`), for SQL that counts taps.
    public static let storedReason = UntokenedReason.tap.stored
    public static let storedKind = VisitKind.shopper.rawValue
}
