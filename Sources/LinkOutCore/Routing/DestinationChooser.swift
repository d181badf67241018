/// Picks a link's destination for a token: weighted, and sticky per `externalPurchaseId` with no shared
/// state.
///
/// Weighted rendezvous (highest-random-weight) hashing: each destination scores
/// `weight / -ln(u)` where `u` is a hash of (id, destination URL) mapped into (0, 1), and the highest
/// score wins. The same id always picks the same destination on any instance and after any restart, the
/// shares follow the weights, and removing a destination moves only the tokens that were on it.
///
/// The hash (FNV-1a, then a 64-bit finaliser) and the logarithm are written out here rather than taken
/// from `Hasher` (seeded per process) or libm (whose last bits may differ between builds), so every
/// instance agrees bit for bit.
public struct DestinationChooser: Sendable {
    private let weights: [Double]
    private let keys: [UInt64]

    public init(destinations: [Destination]) {
        precondition(!destinations.isEmpty, "a link has at least one destination")
        self.weights = destinations.map(\.weight)
        self.keys = destinations.map { StableHash.fnv1a($0.url.utf8) }
    }

    /// The index of the chosen destination.
    public func choose(externalPurchaseId id: String) -> Int {
        choose(externalPurchaseId: id.utf8)
    }

    /// The index of the chosen destination, from the id's bytes.
    public func choose(externalPurchaseId id: some Collection<UInt8>) -> Int {
        if weights.count == 1 { return 0 }
        return choose(externalPurchaseId: id, eligible: { _ in true })!
    }

    /// Destination `index`'s score for an id: `weight / -ln(u)`.
    private func score(idHash: UInt64, index: Int) -> Double {
        let hash = StableHash.mix(idHash ^ keys[index])
        // 53 random bits, offset by half a step so u is never 0 or 1.
        let unit = (Double(hash >> 11) + 0.5) / 9_007_199_254_740_992.0
        return weights[index] / -Self.naturalLog(unit)
    }

    /// ln(x) for x in (0, 1], from IEEE operations only: x = m·2^e with m in [√2/2, √2), and
    /// ln(m) = 2·atanh((m-1)/(m+1)) by its series, which converges fast since that ratio is below 0.18.
    /// Keeping m around 1 (rather than in [1, 2)) avoids cancelling -ln 2 against ln m for x just below 1.
    static func naturalLog(_ x: Double) -> Double {
        var exponent: Double
        var mantissa: Double
        if x.isNormal {
            // x.exponent and x.significand from the bits, inlined (the stdlib's `significand` is a call); every
            // unit the chooser makes is normal. 1023 is the exponent's bias.
            exponent = Double(Int(x.exponentBitPattern) - 1023)
            mantissa = Double(sign: .plus, exponentBitPattern: 1023, significandBitPattern: x.significandBitPattern)
        } else {
            exponent = Double(x.exponent)
            mantissa = x.significand
        }
        if mantissa > 1.414_213_562_373_095_1 {
            mantissa /= 2
            exponent += 1
        }
        let s = (mantissa - 1) / (mantissa + 1)
        let s2 = s * s
        var term = s
        var sum = 0.0
        var denominator = 1.0
        for _ in 0..<16 {
            sum += term / denominator
            term *= s2
            denominator += 2
        }
        return exponent * 0.693_147_180_559_945_3 + 2 * sum
    }
}

extension DestinationChooser {
    /// The highest-scoring destination among those `eligible` says may be used (the healthy ones), or nil
    /// when none may. A token whose first choice is eligible gets it, as without health checks; the others
    /// move to their next choice, which spreads a down destination's share over the rest by weight.
    public func choose(externalPurchaseId id: some Collection<UInt8>, eligible: (Int) -> Bool) -> Int? {
        let idHash = StableHash.fnv1a(id)
        var best: Int?
        var bestScore = -Double.infinity
        for index in weights.indices where eligible(index) {
            let score = score(idHash: idHash, index: index)
            if score > bestScore {
                bestScore = score
                best = index
            }
        }
        return best
    }
}
