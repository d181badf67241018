import LinkOutCore

/// Everything a reload can change, as one value: the rules (links, apps, token policy) and the pages.
/// Each loop holds its own copy and swaps it whole between two requests.
package struct ServingState: Sendable {
    package var gateway: Gateway
    package var pages: Pages
    /// The GeoIP database, for shared links' country; nil: none configured. Part of the state so that
    /// a reload opens the file again, picking up a database `geoipupdate` replaced.
    package var geoIP: GeoIPDatabase?
    /// Each link's counters, in the config's order; filled in by the server.
    var linkMetrics: [LinkMetrics] = []

    package init(gateway: Gateway, pages: Pages, geoIP: GeoIPDatabase? = nil) {
        self.gateway = gateway
        self.pages = pages
        self.geoIP = geoIP
    }
}
