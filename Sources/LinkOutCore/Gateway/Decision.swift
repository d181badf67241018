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
    case notFound
    /// 405 with `Allow: GET, HEAD`.
    case methodNotAllowed
}

public struct Redirect: Sendable, Equatable {
    public var location: String
    /// nil for HEAD, which answers like GET but records nothing (link scanners and prefetchers).
    public var record: VisitRecord?
    public var link: String
    /// The link's position in the config's `links`, and the destination's in its `destinations`: for
    /// per-link counters without a look-up by name.
    public var linkIndex: Int
    public var destinationIndex: Int
    /// Set when the token was refused and the link sends such shoppers on anyway.
    public var refusal: TokenRejection?
}

public struct Refusal: Sendable, Equatable {
    public var rejection: TokenRejection
    public var link: String
    public var linkIndex: Int
}
