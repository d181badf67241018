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
    /// The client's address as evhttp saw it; truncated when written.
    public var client: String
    /// From arrival to the reply, commit included.
    public var durationMicroseconds: Int64

    public init(
        time: Int64, method: String, route: String, status: Int, reason: String? = nil,
        externalPurchaseId: String? = nil, destination: String? = nil, client: String, durationMicroseconds: Int64
    ) {
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

/// How much of a client address the access log keeps: by default the /24 of IPv4 and the /48 of IPv6,
/// enough to see where traffic comes from without keeping who it was.
public struct ClientAddressPolicy: Sendable, Equatable {
    public var ipv4PrefixBits: Int
    public var ipv6PrefixBits: Int

    public static let defaults = ClientAddressPolicy(ipv4PrefixBits: 24, ipv6PrefixBits: 48)

    public init(ipv4PrefixBits: Int, ipv6PrefixBits: Int) {
        self.ipv4PrefixBits = ipv4PrefixBits
        self.ipv6PrefixBits = ipv6PrefixBits
    }

    /// The address with the bits past the prefix zeroed, in the usual text form; "-" for anything that is
    /// not an IP address.
    public func truncate(_ address: String) -> String {
        if let ipv4 = IPAddressText.parseIPv4(address) {
            let kept = ipv4PrefixBits >= 32 ? ipv4 : ipv4 & ~(UInt32.max >> UInt32(max(0, ipv4PrefixBits)))
            return IPAddressText.formatIPv4(kept)
        }
        if var ipv6 = IPAddressText.parseIPv6(address) {
            for index in 0..<16 {
                let bitsBefore = index * 8
                if bitsBefore >= ipv6PrefixBits {
                    ipv6[index] = 0
                } else if bitsBefore + 8 > ipv6PrefixBits {
                    ipv6[index] &= UInt8(truncatingIfNeeded: 0xFF << (8 - (ipv6PrefixBits - bitsBefore)))
                }
            }
            return IPAddressText.formatIPv6(ipv6)
        }
        return "-"
    }
}
