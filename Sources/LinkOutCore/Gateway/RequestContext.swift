/// What the core may ask of a request beyond its method and target: headers, the peer, and the GeoIP
/// database's answer. The server answers from the parsed head; each question is asked only when a rule needs it
/// (a geo look-up only for a shared link, headers only for a link-out).
public protocol RequestContext {
    /// A request header's value, nil when absent.
    func header(_ name: String) -> String?
    /// The direct peer's address (not a forwarded one): the trust check for headers from a load balancer.
    func peerAddress() -> String
    /// The client's country from the GeoIP database (lowercase), nil without a database or an answer.
    func geoCountry() -> String?
    /// The client's address: the peer, or behind a trusted proxy the address its forwarding header names.
    /// What keeps a tap (no token to hash) on one destination and one experiment variant.
    func clientAddress() -> String
}

extension RequestContext {
    /// Without proxies to believe, the client is the peer.
    public func clientAddress() -> String { peerAddress() }
}

/// A request with no headers, a peer outside every trusted range and no GeoIP answer: the tests' and the
/// fuzzers' default.
public struct NoRequestContext: RequestContext {
    public init() {}
    public func header(_ name: String) -> String? { nil }
    public func peerAddress() -> String { "" }
    public func geoCountry() -> String? { nil }
}
