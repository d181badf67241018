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
    let experiment: (experiment: Experiment, set: DestinationSet)?
    let fallback: DestinationSet.Entry?
    /// A shared link: the shopper's country chooses among `sets`.
    let isShared: Bool

    init(
        link: Link, index: Int, sets: [String: DestinationSet], ownSet: DestinationSet,
        experiment: (experiment: Experiment, set: DestinationSet)?, fallback: DestinationSet.Entry?
    ) {
        self.link = link
        self.index = index
        self.sets = sets
        self.ownSet = ownSet
        self.experiment = experiment
        self.fallback = fallback
        self.isShared = !link.countries.isEmpty
    }
}
