/// A link with what is derived from it once, at load. A class: a request takes one reference to it
/// rather than copying a struct of arrays and strings (a retain and release for each).
final class Route: Sendable {
    let link: Link
    /// The link's position in `config.links`.
    let index: Int
    /// By country; the link's own country is always there.
    let sets: [String: DestinationSet]
    /// The link's own country's, kept apart so a single-country link needs no look-up by name.
    let ownSet: DestinationSet
    let experiment: Split?
    let fallback: DestinationSet.Entry?
    /// A shared link: the shopper's country chooses among `sets`.
    let isShared: Bool

    init(
        link: Link, index: Int, sets: [String: DestinationSet], ownSet: DestinationSet,
        experiment: Split?, fallback: DestinationSet.Entry?
    ) {
        self.link = link
        self.index = index
        self.sets = sets
        self.ownSet = ownSet
        self.experiment = experiment
        self.fallback = fallback
        self.isShared = !link.countries.isEmpty
    }

    /// A link's experiment with its variants as a destination set. A class, like the route, so a request
    /// takes a reference rather than copying the experiment's strings (and a tuple of them, which Swift
    /// copies and destroys through its generic runtime functions).
    final class Split: Sendable {
        let experiment: Experiment
        let set: DestinationSet

        init(experiment: Experiment, set: DestinationSet) {
            self.experiment = experiment
            self.set = set
        }
    }
}
