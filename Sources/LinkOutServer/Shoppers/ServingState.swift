import LinkOutCore

/// Everything a reload can change, as one value: the rules (links, apps, token policy, the signing
/// secret), the pages, the GeoIP database and the API's and admin listener's keys. Built by one
/// initialiser, at start and on each reload; each loop holds its own copy and swaps it whole between two
/// requests, and the API and admin listeners read the keys of the current one per request.
package struct ServingState: Sendable {
    package var gateway: Gateway
    package var pages: Pages
    /// The GeoIP database, for shared links' country; nil: none configured. Part of the state so that
    /// a reload opens the file again, picking up a database `geoipupdate` replaced.
    package var geoIP: GeoIPDatabase?
    /// The checkout's keys for the API listener: a key removed from the file and reloaded is refused
    /// from the next request on, with no restart.
    package var apiKeys: APIKeys?
    /// The operators' keys for the admin listener, read again on reload as the API's.
    package var adminKeys: APIKeys?
    /// Each link's counters, in the config's order; filled in by the server.
    var linkMetrics: [LinkMetrics] = []

    /// - Parameter health: the board the gateway registers its health targets on, one for the process's
    ///   life, so a destination a reload keeps keeps its state.
    package init(
        config: GatewayConfig, pages: Pages, geoIP: GeoIPDatabase?, apiKeys: APIKeys?, adminKeys: APIKeys?, health: DestinationHealthBoard?
    ) {
        self.gateway = Gateway(config: config, health: health)
        self.pages = pages
        self.geoIP = geoIP
        self.apiKeys = apiKeys
        self.adminKeys = adminKeys
    }
}
