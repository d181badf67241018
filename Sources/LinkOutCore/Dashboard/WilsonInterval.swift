/// The Wilson score interval of a proportion (`successes` of `trials`), the dashboard's confidence interval
/// on an experiment variant's conversion. Chosen over the normal approximation because it stays inside
/// 0...1 and is honest for the small counts and rates near 0 that checkouts have.
public struct WilsonInterval: Sendable, Equatable, Codable {
    public var low: Double
    public var high: Double

    /// `z` 1.96: 95 %. Zero trials give the whole of 0...1 (nothing is known); successes above trials
    /// (repeat purchases counted against visits) are capped at trials.
    public init(successes: Int64, trials: Int64, z: Double = 1.96) {
        guard trials > 0 else {
            low = 0
            high = 1
            return
        }
        let n = Double(trials)
        let p = Double(min(max(successes, 0), trials)) / n
        let z2 = z * z
        let centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        let margin = z / (1 + z2 / n) * ((p * (1 - p) / n + z2 / (4 * n * n))).squareRoot()
        low = max(0, centre - margin)
        high = min(1, centre + margin)
    }
}
