/// Everything the gateway runs on, validated. Built by `ConfigLoader` from the JSON file.
public struct GatewayConfig: Sendable {
    public var server: ServerSettings
    /// The SQLite file; nil means the command line's or the default (`data/linkout.sqlite`).
    public var storePath: String?
    /// Where the store is when the config names none: beside the working folder, as `make run` expects.
    public static let defaultStorePath = "data/linkout.sqlite"
    /// The store in use: the config's `store`, else the default.
    public var store: String { storePath ?? Self.defaultStorePath }
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
    /// Webhook receivers for the checkout's payment providers, on paths of the shoppers' listener.
    public var paymentProviders = PaymentProvidersSettings()
    /// `unrouted.redirectTo`: the id of the link a valid token on a path no link serves is sent on through;
    /// nil: such a shopper gets the 404 page (the token is recorded either way).
    public var unroutedRedirectTo: String?
    /// Apple's commission by region, for the monthly statement; no region: no commission computed.
    public var commission: CommissionSettings

    public init(
        server: ServerSettings = ServerSettings(), storePath: String? = nil, publicDirectory: String? = nil,
        tokens: TokenPolicy = .defaults, apps: [AllowedApp], links: [Link], accessLog: AccessLogSettings = AccessLogSettings(),
        storeOutage: StoreOutageSettings = StoreOutageSettings(), rateLimit: RateLimiter.Policy? = nil,
        proxies: ProxySettings = ProxySettings(), healthChecks: HealthCheckSettings = HealthCheckSettings(),
        geoIPDatabase: String? = nil, bots: BotRules = .defaults, signing: SigningSettings? = nil,
        reporting: ReportingSettings? = nil, api: APISettings? = nil, notifications: NotificationSettings? = nil,
        unroutedRedirectTo: String? = nil, pages: PageSettings = PageSettings(), commission: CommissionSettings = CommissionSettings()
    ) {
        self.commission = commission
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
