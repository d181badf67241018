/// The destinations one request chooses among (a link's, one country's of a shared link, or an
/// experiment's variants), prepared once at load: templates, health slots and the names the Location
/// already carries. Classes, so a request holds a reference to what it chose instead of copying its strings
/// and tables.
final class DestinationSet: Sendable {
    final class Entry: Sendable {
        let url: String
        /// The URL's position in `Link.destinationURLs`.
        let urlIndex: Int
        let template: LocationTemplate
        let variant: String?
        /// nil: not checked, always up.
        let health: HealthSlot?
        /// Parameter names a pass-through may not use: the destination's own and linkout's.
        let takenNames: Set<String>

        init(
            url: String, urlIndex: Int, variant: String? = nil, health: HealthSlot?,
            linkNames: Set<String> = CheckoutParameters.reservedNames
        ) {
            self.url = url
            self.urlIndex = urlIndex
            self.template = LocationTemplate(destination: url)
            self.variant = variant
            self.health = health
            self.takenNames = PassThrough.names(inQueryOf: url).union(linkNames)
        }

        var isUp: Bool { health?.isUp ?? true }
    }

    let entries: [Entry]
    private let chooser: DestinationChooser
    private let checked: Bool

    init(entries: [Entry], weights: [Destination]) {
        self.entries = entries
        self.chooser = DestinationChooser(destinations: weights)
        self.checked = entries.contains { $0.health != nil }
    }

    /// The entry for an id, healthy if any is; nil when every entry is down (the caller falls back).
    func choose(_ id: String) -> Entry? {
        guard checked else { return entries[chooser.choose(externalPurchaseId: id.utf8)] }
        return chooser.choose(externalPurchaseId: id.utf8, eligible: { entries[$0].isUp }).map { entries[$0] }
    }

    /// With every entry down and no fallback: the one up most recently; the id's usual choice on a tie
    /// (such as none ever up since the start).
    func leastBad(_ id: String) -> Entry {
        let usual = entries[chooser.choose(externalPurchaseId: id.utf8)]
        let latest = entries.max { ($0.health?.lastUpMs ?? 0) < ($1.health?.lastUpMs ?? 0) }!
        return (latest.health?.lastUpMs ?? 0) > (usual.health?.lastUpMs ?? 0) ? latest : usual
    }

    /// For a redirect without a token: the first entry that is up, in config order.
    var firstUp: Entry? { entries.first { $0.isUp } }
}
