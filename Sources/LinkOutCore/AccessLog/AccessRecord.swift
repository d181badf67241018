/// One answered request, as the access log writes it. Never the raw token: the `externalPurchaseId` is
/// what operators and Apple's reports use, and the token itself should not travel further than needed.
public struct AccessRecord: Sendable, Equatable {
    /// Unix milliseconds when the request arrived.
    public var time: Int64
    public var method: String
    /// What the path was, by name: a link id, or `healthz`, `readyz`, `not_found`. Never the raw path,
    /// which is the client's to fill with anything.
    public var route: String
    public var status: Int
    /// The refusal code, when the token was refused.
    public var reason: String?
    public var externalPurchaseId: String?
    /// The destination sent to (from the config), for redirects.
    public var destination: String?
    /// For a link-out that is not a shopper's: `prefetch`, `head` or `bot`; nil otherwise.
    public var kind: String?
    /// The client's address (the peer, or behind a trusted proxy the one it names); truncated when written.
    public var client: String
    /// From arrival to the reply, commit included.
    public var durationMicroseconds: Int64

    public init(
        time: Int64, method: String, route: String, status: Int, reason: String? = nil,
        externalPurchaseId: String? = nil, destination: String? = nil, kind: String? = nil, client: String,
        durationMicroseconds: Int64
    ) {
        self.kind = kind
        self.time = time
        self.method = method
        self.route = route
        self.status = status
        self.reason = reason
        self.externalPurchaseId = externalPurchaseId
        self.destination = destination
        self.client = client
        self.durationMicroseconds = durationMicroseconds
    }
}
