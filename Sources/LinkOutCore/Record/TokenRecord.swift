/// One visit with a valid token, as handed to the store: the token as it was decoded, and what this visit
/// adds to it. The store merges visits of the same `externalPurchaseId` into one row: first seen, last
/// seen, hits.
public struct TokenRecord: Sendable, Equatable {
    // `link` comes before `token` here only so that the memberwise initialiser Swift synthesises, which the
    // public one calls, has other labels than it (see the extension below).
    public var link: String
    /// Who the token is: one value for it, whichever door it came through.
    public var token: ExternalPurchaseToken
    public var country: String
    public var destination: String
    /// Unix time in milliseconds of this visit.
    public var seenAt: Int64
    public var stale: Bool
    /// Only a shopper's visit counts as a hit; the others are kept, flagged, since their token exists.
    public var kind: VisitKind
    /// The experiment and variant that chose the destination, when one was running.
    public var experiment: String?
    public var variant: String?
    /// For a token that arrived on a path no link serves (link `unrouted`): that path, sanitised and
    /// bounded (`UnroutedPath`). Nil for every visit to a link's own path.
    public var path: String?

    public var externalPurchaseId: String { token.externalPurchaseId }
    public var appAppleId: Int64 { token.appAppleId }
    public var bundleId: String { token.bundleId }
    public var tokenCreationDate: Int64 { token.tokenCreationDate }
    public var tokenType: TokenType? { token.tokenType }
    public var tokenExpirationDate: Int64? { token.tokenExpirationDate }
    public var environment: TokenEnvironment { token.environment }
}

// The initialisers are in an extension so that Swift still synthesises the memberwise one, which they
// call: an initialiser that assigns the fields one by one leaves a copy and a destroy of the whole record
// behind in optimised code (Swift 6.x), a retain and a release of each of its strings on every request.
extension TokenRecord {
    public init(
        token: ExternalPurchaseToken, link: String, country: String, destination: String, seenAt: Int64, stale: Bool,
        kind: VisitKind = .shopper, experiment: String? = nil, variant: String? = nil, path: String? = nil
    ) {
        self.init(
            link: link, token: token, country: country, destination: destination, seenAt: seenAt, stale: stale, kind: kind,
            experiment: experiment, variant: variant, path: path)
    }

    /// A shopper's visit to a single-country link.
    public init(token: ExternalPurchaseToken, link: Link, destination: String, seenAt: Int64, stale: Bool) {
        self.init(token: token, link: link.id, country: link.country, destination: destination, seenAt: seenAt, stale: stale)
    }
}

/// A visit sent on without a token: one whose token was missing or refused on a link that says
/// `onInvalidToken: redirect`, or a tap on a link that expects none (`token: "none"`). Kept apart from
/// tokens: it has no `externalPurchaseId` to report.
public struct UntokenedVisit: Sendable, Equatable {
    public var link: String
    public var country: String
    public var destination: String
    public var reason: UntokenedReason
    public var seenAt: Int64
    public var kind: VisitKind

    public init(link: String, country: String, destination: String, reason: UntokenedReason, seenAt: Int64, kind: VisitKind = .shopper) {
        self.link = link
        self.country = country
        self.destination = destination
        self.reason = reason
        self.seenAt = seenAt
        self.kind = kind
    }
}

/// What a link-out request asks the store to commit before its redirect is sent.
public enum VisitRecord: Sendable, Equatable {
    case token(TokenRecord)
    case untokened(UntokenedVisit)
}

/// A token as the store holds it: the merged row, as exported.
public struct StoredToken: Sendable, Equatable {
    public var externalPurchaseId: String
    public var appAppleId: Int64
    public var bundleId: String
    public var tokenCreationDate: Int64
    public var tokenType: String?
    public var tokenExpirationDate: Int64?
    public var environment: String
    public var link: String
    public var country: String
    public var destination: String
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// Shoppers' visits.
    public var hits: Int64
    public var stale: Bool
    /// Prefetches, HEADs and bots: visits that are not hits.
    public var otherVisits: Int64
    /// The experiment and variant of the token's first visit, if any.
    public var experiment: String?
    public var variant: String?
    /// The path an unrouted token arrived on (its first visit's), nil for tokens that came through a link.
    public var path: String?
    /// Where its reporting to Apple stands: `unreported` (waiting or due), `sending`, `reported` or
    /// `failed`; nil when the store has no reporting.
    public var report: String?
    /// The status Apple accepted for it (`LINE_ITEM` once any was), nil before.
    public var reportedAs: String?

    public init(
        externalPurchaseId: String, appAppleId: Int64, bundleId: String, tokenCreationDate: Int64,
        tokenType: String?, tokenExpirationDate: Int64?, environment: String, link: String, country: String,
        destination: String, firstSeen: Int64, lastSeen: Int64, hits: Int64, stale: Bool,
        otherVisits: Int64 = 0, experiment: String? = nil, variant: String? = nil, path: String? = nil,
        report: String? = nil, reportedAs: String? = nil
    ) {
        self.path = path
        self.report = report
        self.reportedAs = reportedAs
        self.otherVisits = otherVisits
        self.experiment = experiment
        self.variant = variant
        self.externalPurchaseId = externalPurchaseId
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.tokenCreationDate = tokenCreationDate
        self.tokenType = tokenType
        self.tokenExpirationDate = tokenExpirationDate
        self.environment = environment
        self.link = link
        self.country = country
        self.destination = destination
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.hits = hits
        self.stale = stale
    }
}
