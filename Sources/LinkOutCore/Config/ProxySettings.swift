/// Load balancers or proxies in front of linkout, and the header they put the client's address in.
public struct ProxySettings: Sendable, Equatable {
    public enum Header: String, Sendable, Equatable {
        case xForwardedFor = "X-Forwarded-For"
        case forwarded = "Forwarded"
    }

    public var trusted: TrustedProxies
    public var header: Header
    /// The header a trusted load balancer puts the client's country in (`CF-IPCountry`,
    /// `CloudFront-Viewer-Country`, `X-Country-Code`), for shared links; nil: none.
    public var countryHeader: String?

    public init(trusted: TrustedProxies = .none, header: Header = .xForwardedFor, countryHeader: String? = nil) {
        self.trusted = trusted
        self.header = header
        self.countryHeader = countryHeader
    }
}
