import Testing

@testable import LinkOutCore

/// `DestinationChooser.naturalLog` reads a normal x's exponent and significand from its bits rather than
/// through the stdlib's getters. Choices must not move by a single bit, so it is checked against the
/// function as it was, with the getters, on the chooser's own units and on the awkward ones.
@Suite("naturalLog from the bits")
struct NaturalLogBitsTests {
    typealias F = Fixtures

    /// The function before the change, verbatim but for the getters.
    private func reference(_ x: Double) -> Double {
        var exponent = Double(x.exponent)
        var mantissa = x.significand
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

    @Test("bit for bit the same on the chooser's units, near 1, at the edges and below normal")
    func same() {
        var generator = F.SplitMix64(seed: 61)
        var xs: [Double] = [1, 0.5, 1 - 1e-16, Double.leastNormalMagnitude, Double.leastNonzeroMagnitude, 0.5 / 9_007_199_254_740_992.0]
        for _ in 0..<100_000 {
            // As the chooser makes them: 53 random bits, offset by half a step.
            xs.append((Double(generator.next() >> 11) + 0.5) / 9_007_199_254_740_992.0)
        }
        for _ in 0..<1_000 { xs.append(Double.random(in: 0...Double.leastNormalMagnitude, using: &generator)) }
        for x in xs {
            #expect(DestinationChooser.naturalLog(x).bitPattern == reference(x).bitPattern, "\(x)")
        }
    }
}
