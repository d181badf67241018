import Foundation
import Testing

@testable import LinkOutCore

@Suite("DestinationChooser")
struct DestinationChooserTests {
    typealias F = Fixtures

    static func destinations(_ weights: [Double]) -> [Destination] {
        weights.enumerated().map { Destination(url: "https://d\($0.offset).example.com/checkout", weight: $0.element) }
    }

    static func ids(_ count: Int, seed: UInt64) -> [String] {
        var generator = F.SplitMix64(seed: seed)
        return (0..<count).map { _ in F.randomUUID(using: &generator) }
    }

    private func shares(_ weights: [Double], ids: [String]) -> [Double] {
        let chooser = DestinationChooser(destinations: Self.destinations(weights))
        var counts = [Int](repeating: 0, count: weights.count)
        for id in ids { counts[chooser.choose(externalPurchaseId: id.utf8)] += 1 }
        return counts.map { Double($0) / Double(ids.count) }
    }

    // MARK: Stickiness

    @Test("the same id always picks the same destination, on any instance")
    func deterministic() {
        let destinations = Self.destinations([3, 1, 2])
        let first = DestinationChooser(destinations: destinations)
        let second = DestinationChooser(destinations: destinations)
        for id in Self.ids(2000, seed: 1) {
            let index = first.choose(externalPurchaseId: id.utf8)
            #expect((0..<3).contains(index))
            #expect(first.choose(externalPurchaseId: id.utf8) == index)
            #expect(second.choose(externalPurchaseId: id.utf8) == index)
            #expect(second.choose(externalPurchaseId: Array(id.utf8)) == index)
        }
    }

    @Test("choices are pinned: the same ids land in the same place after a restart or upgrade")
    func pinnedChoices() {
        // If these change, every token in flight is re-routed: change them only on purpose.
        let chooser = DestinationChooser(destinations: [
            Destination(url: "https://checkout.example.com/nl", weight: 3),
            Destination(url: "https://checkout-b.example.com/nl", weight: 1),
        ])
        let ids = [
            "00000000-0000-0000-0000-000000000000", "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
            "SANDBOX_3f2504e0-4f89-41d3-9a0c-0305e82c3301", "ffffffff-ffff-ffff-ffff-ffffffffffff",
        ]
        let choices = ids.map { chooser.choose(externalPurchaseId: $0.utf8) }
        // Recomputed independently from the documented algorithm (FNV-1a, splitmix64, weight / -ln u).
        let expected = ids.map { id -> Int in
            let idHash = referenceFNV1a(Array(id.utf8))
            let scores = [("https://checkout.example.com/nl", 3.0), ("https://checkout-b.example.com/nl", 1.0)].map { url, weight in
                let hash = referenceSplitMix(idHash ^ referenceFNV1a(Array(url.utf8)))
                let unit = (Double(hash >> 11) + 0.5) / 9_007_199_254_740_992.0
                return weight / -Foundation.log(unit)
            }
            return scores[0] >= scores[1] ? 0 : 1
        }
        #expect(choices == expected)
    }

    @Test("a single destination is always chosen")
    func single() {
        let chooser = DestinationChooser(destinations: [Destination(url: "https://only.example/")])
        for id in Self.ids(100, seed: 2) { #expect(chooser.choose(externalPurchaseId: id.utf8) == 0) }
        #expect(chooser.choose(externalPurchaseId: [UInt8]()) == 0)
    }

    @Test("the choice follows the URL, not its position in the list")
    func orderIndependent() {
        let destinations = Self.destinations([1, 2, 3])
        let forward = DestinationChooser(destinations: destinations)
        let reversedList = Array(destinations.reversed())
        let backward = DestinationChooser(destinations: reversedList)
        for id in Self.ids(2000, seed: 3) {
            #expect(
                destinations[forward.choose(externalPurchaseId: id.utf8)].url
                    == reversedList[backward.choose(externalPurchaseId: id.utf8)].url)
        }
    }

    // MARK: Weights

    @Test("weights 3:1 split 75% / 25% (±2 points) over 20,000 random ids")
    func threeToOne() {
        let shares = shares([3, 1], ids: Self.ids(20_000, seed: 4))
        #expect(abs(shares[0] - 0.75) < 0.02, "\(shares)")
        #expect(abs(shares[1] - 0.25) < 0.02, "\(shares)")
    }

    @Test("weights 1:1:2 split 25% / 25% / 50% (±2 points) over 20,000 random ids")
    func oneOneTwo() {
        let shares = shares([1, 1, 2], ids: Self.ids(20_000, seed: 5))
        #expect(abs(shares[0] - 0.25) < 0.02, "\(shares)")
        #expect(abs(shares[1] - 0.25) < 0.02, "\(shares)")
        #expect(abs(shares[2] - 0.50) < 0.02, "\(shares)")
    }

    @Test("Foundation's random UUIDs (uppercase) split the same way")
    func systemUUIDs() {
        let ids = (0..<20_000).map { _ in UUID().uuidString }
        let shares = shares([3, 1], ids: ids)
        #expect(abs(shares[0] - 0.75) < 0.02, "\(shares)")
    }

    @Test("sandbox ids split by weight too")
    func sandboxIds() {
        let ids = Self.ids(20_000, seed: 6).map { "SANDBOX_" + $0 }
        let shares = shares([1, 3], ids: ids)
        #expect(abs(shares[1] - 0.75) < 0.02, "\(shares)")
    }

    @Test("fractional and uneven weights")
    func unevenWeights() {
        let shares = shares([0.5, 4.5], ids: Self.ids(20_000, seed: 7))
        #expect(abs(shares[0] - 0.10) < 0.02, "\(shares)")
        let equal = self.shares([1, 1, 1, 1], ids: Self.ids(20_000, seed: 8))
        for share in equal { #expect(abs(share - 0.25) < 0.02, "\(equal)") }
    }

    // MARK: Changes to the list

    @Test("removing a destination moves only the tokens that were on it")
    func removal() {
        let all = Self.destinations([3, 1, 2])
        let before = DestinationChooser(destinations: all)
        let remaining = [all[0], all[2]]
        let after = DestinationChooser(destinations: remaining)
        var moved = 0
        for id in Self.ids(5000, seed: 9) {
            let old = all[before.choose(externalPurchaseId: id.utf8)].url
            let new = remaining[after.choose(externalPurchaseId: id.utf8)].url
            if old == all[1].url {
                moved += 1
                #expect(new != all[1].url)
            } else {
                #expect(new == old, "\(id) moved from \(old) to \(new)")
            }
        }
        #expect(moved > 500)  // about 1/6 of 5000
    }

    @Test("adding a destination moves tokens only onto the new one")
    func addition() {
        let old = Self.destinations([1, 1])
        let new = old + [Destination(url: "https://new.example.com/checkout", weight: 2)]
        let before = DestinationChooser(destinations: old)
        let after = DestinationChooser(destinations: new)
        var movedToNew = 0
        for id in Self.ids(5000, seed: 10) {
            let was = old[before.choose(externalPurchaseId: id.utf8)].url
            let now = new[after.choose(externalPurchaseId: id.utf8)].url
            if now == new[2].url { movedToNew += 1 } else { #expect(now == was) }
        }
        #expect(abs(Double(movedToNew) / 5000 - 0.5) < 0.03)
    }

    @Test("raising one weight moves tokens only onto that destination")
    func weightIncrease() {
        let before = DestinationChooser(destinations: Self.destinations([1, 1, 1]))
        let after = DestinationChooser(destinations: Self.destinations([1, 3, 1]))
        for id in Self.ids(5000, seed: 11) {
            let was = before.choose(externalPurchaseId: id.utf8)
            let now = after.choose(externalPurchaseId: id.utf8)
            if now != was { #expect(now == 1) }
        }
    }

    // MARK: Hash and logarithm

    @Test("FNV-1a matches the published 64-bit test vectors")
    func fnv1aVectors() {
        #expect(StableHash.fnv1a([UInt8]()) == 0xcbf2_9ce4_8422_2325)
        #expect(StableHash.fnv1a("a".utf8) == 0xaf63_dc4c_8601_ec8c)
        #expect(StableHash.fnv1a("foobar".utf8) == 0x8594_4171_f739_67e8)
    }

    @Test("the finaliser is splitmix64's")
    func splitMixVectors() {
        #expect(StableHash.mix(0) == 0xe220_a839_7b1d_cdaf)
        #expect(StableHash.mix(1) == 0x910a_2dec_8902_5cc1)
        #expect(StableHash.mix(0) == referenceSplitMix(0))
        var generator = F.SplitMix64(seed: 12)
        for _ in 0..<1000 {
            let value = generator.next()
            #expect(StableHash.mix(value) == referenceSplitMix(value))
        }
    }

    @Test("naturalLog agrees with Foundation's log to a relative error below 1e-12 on (0, 0.999]")
    func naturalLogAccuracy() {
        var values: [Double] = [
            0.999, 0.99, 0.9, 0.75, 0.5, 0.5 + 1e-9, 0.5 - 1e-12, 1.0 / 3, 0.25, 0.1, 1e-3, 1e-10, 1e-100, 1e-300,
            Double.leastNormalMagnitude, Double.leastNormalMagnitude * 3, Double.leastNonzeroMagnitude,
            Double.leastNonzeroMagnitude * 12345,
            0.5 / 9_007_199_254_740_992.0,  // the smallest unit the chooser makes
        ]
        var generator = F.SplitMix64(seed: 13)
        for _ in 0..<100_000 { values.append(Double.random(in: Double.leastNonzeroMagnitude...0.999, using: &generator)) }
        for exponent in 1...1074 { values.append(Foundation.pow(2.0, -Double(exponent))) }
        for _ in 0..<10_000 {
            // Log-uniform, to reach tiny values too.
            values.append(Foundation.exp(-Double.random(in: 0.001...700, using: &generator)))
        }
        var worst = 0.0
        var worstValue = 0.0
        for x in values where x > 0 && x <= 0.999 {
            let expected = Foundation.log(x)
            let error = abs(DestinationChooser.naturalLog(x) - expected) / abs(expected)
            if error > worst {
                worst = error
                worstValue = x
            }
        }
        #expect(worst < 1e-12, "worst relative error \(worst) at \(worstValue)")
    }

    @Test("naturalLog(1) is exactly 0, and its sign is right")
    func naturalLogOfOne() {
        #expect(DestinationChooser.naturalLog(1) == 0)
        #expect(DestinationChooser.naturalLog(0.5) == -0.693_147_180_559_945_3)
        #expect(DestinationChooser.naturalLog(1 - 1e-9) < 0)
    }

    @Test("naturalLog keeps its relative accuracy just below 1")
    func naturalLogNearOne() {
        // x = m * 2^-1 with m just below 2 would cancel -ln 2 against ln m; the reduction keeps m near 1.
        var worst = 0.0
        var worstValue = 0.0
        var xs = (10...53).map { 1 - Foundation.pow(2.0, -Double($0)) }
        var generator = F.SplitMix64(seed: 14)
        for _ in 0..<10_000 { xs.append(Double.random(in: 0.999..<1, using: &generator)) }
        for x in xs {
            let error = abs(DestinationChooser.naturalLog(x) - Foundation.log(x)) / abs(Foundation.log(x))
            if error > worst {
                worst = error
                worstValue = x
            }
        }
        #expect(worst < 1e-12, "worst relative error \(worst) at \(worstValue)")
    }
}

// MARK: Reference implementations, written from the published definitions

private func referenceFNV1a(_ bytes: [UInt8]) -> UInt64 {
    var hash: UInt64 = 14_695_981_039_346_656_037
    for byte in bytes {
        hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211
    }
    return hash
}

private func referenceSplitMix(_ state: UInt64) -> UInt64 {
    var generator = Fixtures.SplitMix64(seed: state)
    return generator.next()
}
