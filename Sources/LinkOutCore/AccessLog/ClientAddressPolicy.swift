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
            return IPAddressText.formatIPv4(ipv4 & IPAddressText.ipv4Mask(bits: ipv4PrefixBits))
        }
        if let ipv6 = IPAddressText.parseIPv6(address) {
            return IPAddressText.formatIPv6(IPAddressText.masked(ipv6, bits: ipv6PrefixBits))
        }
        return "-"
    }
}
