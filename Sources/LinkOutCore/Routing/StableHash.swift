/// The hash behind everything that must come out the same on every instance and after every restart
/// (a token's destination, its experiment variant, a client's rate-limit slot): FNV-1a over the bytes,
/// then splitmix64's finaliser. Not Swift's `Hasher`, which is seeded per process.
public enum StableHash {
    /// 64-bit FNV-1a.
    public static func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        // A String's UTF-8 (a token's id, on every request) is read straight from its storage: through the
        // generic view it cost some 30 instructions a byte.
        if let hash = bytes.withContiguousStorageIfAvailable({ fnv1a(UnsafeRawBufferPointer($0)) }) { return hash }
        return bytes.reduce(fnvOffsetBasis, fnvStep)
    }

    public static func fnv1a(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        bytes.reduce(fnvOffsetBasis, fnvStep)
    }

    private static let fnvOffsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325

    @inline(__always)
    private static func fnvStep(_ hash: UInt64, _ byte: UInt8) -> UInt64 {
        (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    /// The splitmix64 finaliser: spreads FNV's weak low bits over the whole word.
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
