/// The config's `notifications` section: Apple's App Store Server Notifications V2 arrive as a `POST` on
/// `path` of the shoppers' listener. Off unless configured.
public struct NotificationSettings: Sendable, Equatable {
    /// The path set as the notification URL's path in App Store Connect (`/apple/notifications`).
    public var path: String
    /// The largest body read on `path`; every other path still refuses any body. Apple's notifications
    /// are a few kilobytes (three certificates and a small payload).
    public var maxBodyBytes: Int = 65_536
    /// Per client (the address `proxies` name behind a trusted proxy), checked before anything is decoded:
    /// beyond it, 429. Apple posts from a few addresses, a notification per token event, far below this;
    /// a flood from one address costs a counter. Split between the loops as the shoppers' limit is.
    public var rateLimit = NotificationSettings.defaultRateLimit
    public static let defaultRateLimit = RateLimiter.Policy(ratePerSecond: 20, burst: 100)
    /// How long the body may take to arrive after its head: Apple sends a few kilobytes at once, so a body
    /// still trickling in after this is a client holding a connection open, and it is closed.
    public var bodyTimeoutSeconds: Int = 5
    /// Notifications screened and waiting for the intake thread's signature checks and store, beyond which
    /// the gateway answers 503 with Retry-After (Apple retries): memory and the wait stay bounded.
    public var maxQueued: Int = 64
    /// Notifications whose JWS signature is checked per second, all clients together (twice that at once);
    /// beyond it, 503 with Retry-After. A check costs ~0.1 ms of a core, and anyone holding Apple's public
    /// chain can make a notification that needs one: from many addresses, only this bounds their cost.
    public var verificationsPerSecond: Double = 100
    /// x5c chains not seen before whose signatures are checked per second, all clients together (twice that
    /// at once); beyond it, 503 with Retry-After. Apple signs with a few chains, each checked once and then
    /// cached, so genuine traffic needs almost none; a forger can make every chain new and pass every check
    /// by name (an intermediate naming Apple's root), and each costs a chain check (~0.3 ms, more with Apple
    /// Root CA – G3's P-384 key).
    public var newChainsPerSecond: Double = 2
    /// Whether serve asks Apple's notification history (`NotificationHistory`) at start-up and daily for
    /// notifications it missed, with the reporting key, at the reporting hosts.
    public var history = true
    /// How far back the first fetch of the history reaches (later ones start where the last ended).
    public var historyFirstLookBackDays: Int64 = 30
    /// PEM files of the roots a notification's chain must end at; empty: Apple Root CA – G3, built in
    /// (`AppleRootCA.g3PEM`, the same as `config/AppleRootCA-G3.pem`).
    public var rootCertificateFiles: [String] = []
    /// The roots' PEM text: filled by whoever reads `rootCertificateFiles` (the core does no I/O), or the
    /// built-in Apple Root CA – G3 when no file is named.
    public var rootCertificatesPEM: [String] = []

    public init(path: String) {
        self.path = path
    }

    /// The roots to trust: the files' PEMs when the config names files, else Apple's.
    public var trustedRootsPEM: [String] {
        rootCertificateFiles.isEmpty ? [AppleRootCA.g3PEM] : rootCertificatesPEM
    }
}
