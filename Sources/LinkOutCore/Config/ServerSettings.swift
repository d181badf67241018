/// The `server` section: the listeners, loop threads, timeouts, drain, the writer's queue, and when a
/// link-out's redirect may be sent relative to its record's commit (`durability`).
public struct ServerSettings: Sendable, Equatable {
    public var listen: ListenAddress
    /// The operators' listener (`/metrics`, `/healthz`, `/readyz`); nil turns it off.
    public var adminListen: ListenAddress?
    /// The operators' keys (`NAME SHA256-HEX` lines, as `api.keysFile`): when set, every admin path but
    /// `/healthz` and `/readyz` needs one as a bearer key or a basic-auth password. Required for an admin
    /// listener off loopback.
    public var adminKeysFile: String?
    /// Event-loop threads; 0 means one per core.
    public var threads: Int
    /// After SIGTERM, how long to keep serving with `/readyz` at 503 so load balancers take the instance
    /// out before it stops accepting.
    public var drainGraceSeconds: Double
    /// Records waiting for the writer beyond which link-out requests get 503 instead of queueing without
    /// bound.
    public var maxPendingRecords: Int
    /// Seconds a connection may sit idle (or leave its answers unread) before linkout closes it.
    public var idleTimeoutSeconds: Int
    /// The whole time a connection may take to send a request head, from its opening or from the last
    /// answer on it: a slow client trickling bytes (which resets the idle timeout) is cut off after it.
    /// 0 turns it off.
    public var requestHeadTimeoutSeconds: Int = 10
    public var durability: Durability

    public init(
        listen: ListenAddress = ListenAddress(host: "127.0.0.1", port: 8080), threads: Int = 0,
        drainGraceSeconds: Double = 0, maxPendingRecords: Int = 50_000, idleTimeoutSeconds: Int = 30,
        durability: Durability = .strict,
        adminListen: ListenAddress? = ListenAddress(host: "127.0.0.1", port: 9464)
    ) {
        self.listen = listen
        self.adminListen = adminListen
        self.threads = threads
        self.drainGraceSeconds = drainGraceSeconds
        self.maxPendingRecords = maxPendingRecords
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.durability = durability
    }
}

/// When a link-out's redirect may be sent relative to its record's commit.
public enum Durability: Sendable, Equatable {
    /// The 302 is sent only after the record is committed and fsynced: no redirected token is ever lost.
    case strict
    /// The 302 is sent as soon as the record is queued; the writer commits within `commitWindowMs`.
    /// A crash (or power cut) loses the visits of that last window, and a failed commit loses its batch.
    case relaxed(commitWindowMs: Int)
}
