/// The request facts the core needs: the method, as far as the gateway cares.
public enum RequestMethod: Sendable, Equatable {
    case get
    case head
    case other
}

/// What the server should answer. The server adds the bytes and headers; the core decides.
public enum Decision: Sendable, Equatable {
    /// `GET /healthz`: 200 while the process runs.
    case health
    /// `GET /readyz`: the server knows whether it is draining and how the store is doing.
    case readiness
    /// 302 to `location`. With a record, the record must be committed first.
    case redirect(Redirect)
    /// 400 with the "go back to the app" page.
    case reject(Refusal)
    /// The 404 page; nothing recorded.
    case notFound
    /// A valid token on a path no link serves, with no `unrouted.redirectTo`: recorded (Apple expects it
    /// reported, and a 404 alone would hide an Info.plist pointing at the wrong path), then, once
    /// committed as a 302 would be, the 404 page.
    case recordThenNotFound(UnroutedVisit)
    /// 405 with `Allow: GET, HEAD`.
    case methodNotAllowed
    /// `GET /favicon.ico`: browsers ask for it with every page; a cacheable empty answer, not a 404 page.
    case favicon
    /// `GET /robots.txt`: nothing here is for crawlers.
    case robots
}

public struct Redirect: Sendable, Equatable {
    // `record` comes before `location` only so that the memberwise initialiser Swift synthesises, which
    // the public one below calls, has other labels than it (see the extension).

    /// To commit before the 302 is sent (in strict durability).
    public var record: VisitRecord
    public var location: String
    public var link: String
    /// The link's position in the config's `links`, and the destination's in its `destinationURLs`: for
    /// per-link counters without a look-up by name.
    public var linkIndex: Int
    public var destinationIndex: Int
    /// Set when the token was refused and the link sends such shoppers on anyway.
    public var refusal: TokenRejection?
    /// Who the visit is from; only `.shopper` counts as a hit.
    public var kind: VisitKind
    /// Every destination the request could go to was down: this is the link's fallback or the least-bad.
    public var allDown: Bool
    /// A valid token on a path no link serves, sent on through `unrouted.redirectTo`'s link (and recorded
    /// as link `unrouted`): the sanitised path.
    public var unroutedPath: String?
    /// The token is recorded, but of a shape Apple has not documented: the server counts it. Worked out
    /// here, once, so the server's hot path tests a single optional.
    public var unusualToken: UnusualTokenType?
}

// The initialiser is in an extension so that Swift still synthesises the memberwise one, which it calls:
// an initialiser that assigns the fields one by one leaves a copy and a destroy of the whole redirect
// behind in optimised code (Swift 6.x), a retain and a release of each of its strings on every request.
extension Redirect {
    public init(
        location: String, record: VisitRecord, link: String, linkIndex: Int, destinationIndex: Int,
        refusal: TokenRejection?, kind: VisitKind = .shopper, allDown: Bool = false, unroutedPath: String? = nil,
        unusualToken: UnusualTokenType? = nil
    ) {
        self.init(
            record: record, location: location, link: link, linkIndex: linkIndex, destinationIndex: destinationIndex,
            refusal: refusal, kind: kind, allDown: allDown, unroutedPath: unroutedPath, unusualToken: unusualToken)
    }
}

/// A valid token on a path no link serves, to record as link `unrouted` before the 404 page.
public struct UnroutedVisit: Sendable, Equatable {
    public var record: TokenRecord
    /// The path as sent, sanitised and bounded (`UnroutedPath`); also in `record.path`.
    public var path: String { record.path ?? "" }
    public var kind: VisitKind { record.kind }
    /// Of a shape Apple has not documented: the server counts it.
    public var unusualToken: UnusualTokenType?
}

public struct Refusal: Sendable, Equatable {
    public var rejection: TokenRejection
    public var link: String
    public var linkIndex: Int
}
