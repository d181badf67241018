/// A split test on a link: named variants, each a destination with a weight, until `endsAtMs`. While it
/// runs it replaces the link's destinations for every country the link serves, and each visit records
/// the experiment and its variant, so the export shows visits per variant. A shopper stays in one variant
/// (the choice is the same rendezvous hashing as destinations, on the token's id). After the end, the
/// link's destinations serve again and visits carry no variant.
public struct Experiment: Sendable, Equatable {
    public var name: String
    /// Unix milliseconds; the experiment runs while a visit's time is before it.
    public var endsAtMs: Int64
    public var variants: [Variant]

    public init(name: String, endsAtMs: Int64, variants: [Variant]) {
        self.name = name
        self.endsAtMs = endsAtMs
        self.variants = variants
    }

    public func isRunning(atMs nowMs: Int64) -> Bool { nowMs < endsAtMs }

    public struct Variant: Sendable, Equatable {
        public var name: String
        public var destination: Destination

        public init(name: String, destination: Destination) {
            self.name = name
            self.destination = destination
        }
    }
}
