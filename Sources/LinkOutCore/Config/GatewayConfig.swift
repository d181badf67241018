/// Everything the gateway runs on, validated. Built by `ConfigLoader` from the JSON file.
public struct GatewayConfig: Sendable {
    public var server: ServerSettings
    /// The SQLite file; nil means the command line's or the default (`data/linkout.sqlite`).
    public var storePath: String?
    /// The folder holding the shopper pages' template and message tables (`page.html`, `messages/`), laid
    /// out as the package's `Public/`; nil: the copy of `Public/` built into the binary.
    public var publicDirectory: String?
    /// The operator's brand name, support link and own pages.
    public var pages = PageSettings()
    public var tokens: TokenPolicy
    public var apps: [AllowedApp]
    public var links: [Link]
    /// Per-client limit on link-out requests; nil: no limit.
    public var rateLimit: RateLimiter.Policy?
    /// Peers whose forwarding header names the client (for the rate limit and the access log).
    public var proxies: ProxySettings
    public var accessLog: AccessLogSettings
    /// What a PostgreSQL store's outage does (spool or fail closed); ignored for SQLite.
    public var storeOutage: StoreOutageSettings
    /// How destinations with a `health` check are checked.
    public var healthChecks: HealthCheckSettings
    /// A MaxMind database for shared links' country, when no trusted header names it; nil: none.
    public var geoIPDatabase: String?
    /// What marks a visit as a bot's.
    public var bots: BotRules
    /// The secret for `linkoutRef`; nil: no link may sign.
    public var signing: SigningSettings?
    /// Reporting tokens to Apple; nil: nothing is sent.
    public var reporting: ReportingSettings?
    /// The checkout's line-item listener; nil: off.
    public var api: APISettings?
    /// Apple's App Store Server Notifications, on a path of the shoppers' listener; nil: off.
    public var notifications: NotificationSettings?
    /// `unrouted.redirectTo`: the id of the link a valid token on a path no link serves is sent on through;
    /// nil: such a shopper gets the 404 page (the token is recorded either way).
    public var unroutedRedirectTo: String?

    public init(
        server: ServerSettings = ServerSettings(), storePath: String? = nil, publicDirectory: String? = nil,
        tokens: TokenPolicy = .defaults, apps: [AllowedApp], links: [Link], accessLog: AccessLogSettings = AccessLogSettings(),
        storeOutage: StoreOutageSettings = StoreOutageSettings(), rateLimit: RateLimiter.Policy? = nil,
        proxies: ProxySettings = ProxySettings(), healthChecks: HealthCheckSettings = HealthCheckSettings(),
        geoIPDatabase: String? = nil, bots: BotRules = .defaults, signing: SigningSettings? = nil,
        reporting: ReportingSettings? = nil, api: APISettings? = nil, notifications: NotificationSettings? = nil,
        unroutedRedirectTo: String? = nil, pages: PageSettings = PageSettings()
    ) {
        self.server = server
        self.storePath = storePath
        self.publicDirectory = publicDirectory
        self.tokens = tokens
        self.apps = apps
        self.links = links
        self.accessLog = accessLog
        self.storeOutage = storeOutage
        self.rateLimit = rateLimit
        self.proxies = proxies
        self.healthChecks = healthChecks
        self.geoIPDatabase = geoIPDatabase
        self.bots = bots
        self.signing = signing
        self.reporting = reporting
        self.api = api
        self.notifications = notifications
        self.unroutedRedirectTo = unroutedRedirectTo
        self.pages = pages
    }
}

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

/// `HOST:PORT`, IPv4 or bracketed IPv6 (`[::1]:8080`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public static func parse(_ text: String) -> ListenAddress? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard (1...5).contains(portText.count), portText.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let port = Int(portText), (0...65535).contains(port) else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        } else if host.contains(":") {
            return nil
        }
        guard !host.isEmpty else { return nil }
        return ListenAddress(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Where the access log goes and how much of a client address it keeps.
public struct AccessLogSettings: Sendable, Equatable {
    public enum Destination: Sendable, Equatable {
        case off
        case standardOutput
        case standardError
        case file(String)
    }

    public var destination: Destination
    public var clients: ClientAddressPolicy

    public init(destination: Destination = .standardOutput, clients: ClientAddressPolicy = .defaults) {
        self.destination = destination
        self.clients = clients
    }
}

/// Where the signing secret lives, and (once the executable has read it) the secret.
public struct SigningSettings: Sendable, Equatable {
    /// Relative to the config's folder; a file so that systemd credentials or a secret manager can
    /// provide it, and the config itself can be shared.
    public var secretFile: String
    /// Filled by whoever reads the file (the core does no I/O); trailing newlines are not part of it.
    public var secret: [UInt8]

    public init(secretFile: String, secret: [UInt8] = []) {
        self.secretFile = secretFile
        self.secret = secret
    }
}
