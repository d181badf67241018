/// One answer, from whatever decided it to the socket: status, header fields and body, whether the
/// connection closes after it, and what the access log says of it. Made by pure functions (the gateway's
/// `ShopperReplies`, the admin and API listeners' handlers); written, counted and logged in one place, the
/// connection layer's exit, whichever way the request ended.
public struct Reply: Sendable {
    public var status: Int
    /// Fields besides those the connection layer adds itself (Date, Content-Length, Connection).
    public var headers: [ReplyHeader]
    public var body: [UInt8]
    /// Close the connection once this answer is out (a refused head: what follows it cannot be trusted).
    public var close: Bool
    /// What the access log line says beyond status and timing.
    public var access: ReplyAccess

    public init(status: Int, headers: [ReplyHeader] = [], body: [UInt8] = [], close: Bool = false, access: ReplyAccess) {
        self.status = status
        self.headers = headers
        self.body = body
        self.close = close
        self.access = access
    }

    /// The first value of a field by its exact name, for tests and logs.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}

/// A header field of a reply. Names are literals; values come from linkout (never copied from a request
/// unchecked), so neither can hold a CR or LF.
public struct ReplyHeader: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// What the exit logs and counts of an answer: the route it took, what it decided, and what it counts as.
public struct ReplyAccess: Sendable, Equatable {
    public var route: String
    public var reason: String?
    public var externalPurchaseId: String?
    public var destination: String?
    /// nil for a shopper's visit.
    public var kind: String?
    public var count: ReplyCount

    public init(
        route: String, reason: String? = nil, externalPurchaseId: String? = nil, destination: String? = nil, kind: String? = nil,
        count: ReplyCount = .uncounted
    ) {
        self.route = route
        self.reason = reason
        self.externalPurchaseId = externalPurchaseId
        self.destination = destination
        self.kind = kind
        self.count = count
    }
}
