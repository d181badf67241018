/// What `serve` does when its PostgreSQL store is unreachable or too slow (`storeOutage` in the config).
/// Only a PostgreSQL store has outages of this kind: with a SQLite store these settings are ignored.
public struct StoreOutageSettings: Sendable, Equatable {
    public enum Mode: String, Sendable, Equatable, CaseIterable {
        /// Keep redirecting: each batch PostgreSQL cannot take is committed to a local SQLite spool
        /// (durably, before its 302s), and replayed into PostgreSQL once it answers again.
        case spool
        /// Nothing is recorded or redirected while PostgreSQL fails: shoppers get the 503 page.
        case failClosed = "fail-closed"
    }

    public var mode: Mode
    /// The spool file; nil means the command line's or the default (`data/spool.sqlite`).
    public var spoolPath: String?
    /// The longest a PostgreSQL statement (or connection attempt, rounded up to whole seconds, at least 2)
    /// may take before the batch counts as failed.
    public var timeoutMs: Int

    public static let defaultSpoolPath = "data/spool.sqlite"

    public init(mode: Mode = .spool, spoolPath: String? = nil, timeoutMs: Int = 2000) {
        self.mode = mode
        self.spoolPath = spoolPath
        self.timeoutMs = timeoutMs
    }
}
