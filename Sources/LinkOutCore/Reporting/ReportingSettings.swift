/// The config's `reporting` section: how linkout reports every token to Apple's External Purchase Server
/// API. Present means on; absent means linkout records tokens and reports nothing.
public struct ReportingSettings: Sendable, Equatable {
    /// The In-App Purchase key from App Store Connect (a `.p8` PEM file). A secret: read only by the
    /// commands that send (`serve`, `report run`), never logged.
    public var keyFile: String
    public var keyId: String
    public var issuerId: String
    /// A token with no line item this long after its `tokenCreationDate` is reported `NO_LINE_ITEM`.
    /// Apple reminds the developer 10 days after creation, so it must stay under 240 hours.
    public var noPurchaseAfterHours: Double = Self.defaultNoPurchaseAfterHours
    /// The default no-purchase window, for readers of reporting's state when the config has no `reporting`.
    public static let defaultNoPurchaseAfterHours: Double = 72
    public static let defaultNoPurchaseAfterMs = Int64(defaultNoPurchaseAfterHours * 3_600_000)
    /// How long a token's new or changed line items wait before they are sent, so the lines of one
    /// checkout (a purchase and its tax lines, a batch import) travel in one report.
    public var gatherSeconds: Double = Self.defaultGatherSeconds
    /// The default gathering time, for readers of reporting's state when the config has no `reporting`.
    public static let defaultGatherSeconds: Double = 30
    public static let defaultGatherMs = Int64(defaultGatherSeconds * 1000)
    /// The day of the month after a month's end by which every token created in it must be reported
    /// (Apple's monthly deadline, 15 days after the month under the EU's and Japan's terms): month close.
    public var monthCloseDay: Int64 = MonthClose.defaultCloseDay
    /// Where reports go: ids starting with `SANDBOX` to the sandbox host, the others to production.
    public var productionURL: String = ReportingSettings.appleProductionURL
    public var sandboxURL: String = ReportingSettings.appleSandboxURL
    /// A PEM bundle to verify the hosts with instead of the system's CAs (a proxy, tests). Never off.
    public var caFile: String?
    /// The longest one request to Apple may take, connection included.
    public var timeoutSeconds: Int = 30
    /// How often the reporter looks for work when nothing wakes it.
    public var pollSeconds: Double = 5
    /// The wait before the first retry of a report Apple did not answer (5xx, timeout); each further
    /// retry waits twice as long, up to an hour.
    public var retrySeconds: Double = 10
    /// The wait before a report Apple refused is sent again on its own, when the refusal may be Apple's
    /// state rather than the body (`RefusalRetry`); each further retry waits twice as long, up to a day.
    public var refusedRetrySeconds: Double = 3600
    /// How many times a refused report is sent again on its own before it waits for `linkout report retry`.
    /// The default, 8 with the first after an hour, spans about four days (1+2+4+8+16+24+24+24 hours).
    public var refusedRetries: Int = 8
    /// The most requests to Apple the reporter keeps in flight at once. Apple publishes no rate limit: the
    /// reporter starts low and goes up to this while Apple answers promptly, down on 429 and 5xx
    /// (`SendConcurrency`). 64 at Apple's ~100 ms is ~530 reports a second (bench/reporting), 45 million a
    /// day; over HTTP/2, as Apple's hosts speak, they share one connection.
    public var maxConcurrentRequests: Int = Self.defaultMaxConcurrentRequests
    public static let defaultMaxConcurrentRequests = 64

    public static let appleProductionURL = "https://api.storekit.apple.com"
    public static let appleSandboxURL = "https://api.storekit-sandbox.apple.com"

    /// Filled by whoever reads `keyFile` (the core does no I/O).
    public var privateKeyPEM: String = ""

    public init(keyFile: String, keyId: String, issuerId: String) {
        self.keyFile = keyFile
        self.keyId = keyId
        self.issuerId = issuerId
    }

    /// The base URL for a token's reports: Apple's endpoints must never be mixed.
    public func baseURL(for environment: TokenEnvironment) -> String {
        environment == .sandbox ? sandboxURL : productionURL
    }

    public var noPurchaseAfterMs: Int64 { Int64(noPurchaseAfterHours * 3_600_000) }
    public var gatherMs: Int64 { Int64(gatherSeconds * 1000) }
    public var retryMs: Int64 { Int64(retrySeconds * 1000) }
    public var refusedRetryMs: Int64 { Int64(refusedRetrySeconds * 1000) }
    /// How long a sender holds a report it took: past it, a sender that died is presumed dead and another
    /// takes the report (with the same requestIdentifier, so Apple cannot count it twice).
    public var leaseMs: Int64 { Int64(timeoutSeconds) * 1_000 + 5_000 }
}

/// The config's `api` section: the listener the checkout's servers send line items to. Off unless
/// configured, and never the shoppers' listener.
public struct APISettings: Sendable, Equatable {
    public var listen: ListenAddress
    /// Lines of `NAME SHA256-HEX`: only the keys' hashes are kept, so the file is no secret worth stealing.
    public var keysFile: String
    /// The largest request body accepted.
    public var maxBodyBytes: Int = 1_048_576
    /// Per key, checked once the key is known and before the body is read as JSON: beyond it, 429. A
    /// checkout sends one request per purchase, refund or correction; a backfill goes through
    /// `transactions import`. Twice the rate may come at once.
    public var rateLimit = APISettings.defaultRateLimit
    public static let defaultRateLimit = RateLimiter.Policy(ratePerSecond: 50, burst: 100)
    /// Requests waiting for the store beyond which the API answers 503 with Retry-After (send again):
    /// a request is never left waiting longer than the queue takes to drain, and memory stays bounded.
    public var maxQueued: Int = 256

    public init(listen: ListenAddress, keysFile: String) {
        self.listen = listen
        self.keysFile = keysFile
    }
}
