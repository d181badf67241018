/// How the visits of one token make the token, written once: the stores that merge in Swift (the
/// in-memory one, PostgreSQL's per-batch merge) call it, and the SQL that must merge on its own (the SQLite
/// `tokens` view, PostgreSQL's `ON CONFLICT` across batches) mirrors it, with tests holding all of them to
/// the same results (StoreFixtures' shared checks).
///
/// The rule: a token's fields (link, country, destination, stale, experiment, variant, path) are its first
/// shopper's visit's, or its first visit's while no shopper came: a link preview or prefetch made before
/// the tap may have seen another country or an experiment since ended. Shoppers' visits are `hits`;
/// prefetches, HEADs and bots are `otherVisits`. `firstSeen` and `lastSeen` span every visit.
public struct TokenMerge: Sendable, Equatable {
    /// The visit whose fields the token shows.
    public private(set) var fields: TokenRecord
    public private(set) var firstSeen: Int64
    public private(set) var lastSeen: Int64
    public private(set) var hits: Int64
    public private(set) var otherVisits: Int64

    public init(_ first: TokenRecord) {
        fields = first
        firstSeen = first.seenAt
        lastSeen = first.seenAt
        let shopper = first.kind == .shopper
        hits = shopper ? 1 : 0
        otherVisits = shopper ? 0 : 1
    }

    /// Adds a later visit (in commit order).
    public mutating func add(_ visit: TokenRecord) {
        let shopper = visit.kind == .shopper
        if shopper, hits == 0 { fields = visit }
        firstSeen = min(firstSeen, visit.seenAt)
        lastSeen = max(lastSeen, visit.seenAt)
        if shopper { hits += 1 } else { otherVisits += 1 }
    }

    /// The token as exported.
    public var token: StoredToken {
        StoredToken(
            externalPurchaseId: fields.externalPurchaseId, appAppleId: fields.appAppleId, bundleId: fields.bundleId,
            tokenCreationDate: fields.tokenCreationDate, tokenType: fields.tokenType?.rawValue,
            tokenExpirationDate: fields.tokenExpirationDate, environment: fields.environment.rawValue, link: fields.link,
            country: fields.country, destination: fields.destination, firstSeen: firstSeen, lastSeen: lastSeen,
            hits: hits, stale: fields.stale, otherVisits: otherVisits, experiment: fields.experiment,
            variant: fields.variant, path: fields.path)
    }
}
