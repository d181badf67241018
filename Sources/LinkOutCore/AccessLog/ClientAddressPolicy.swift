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
