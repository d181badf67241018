/// One provider's webhook receiver (`paymentProviders.stripe`, `paymentProviders.paddle`): where its events
/// arrive on the shoppers' listener and the secrets their signatures are checked with.
public struct PaymentProviderSettings: Sendable, Equatable {
    public var provider: PaymentProvider
    /// The path on the shoppers' listener the provider posts to (`/webhooks/stripe`).
    public var path: String
    /// `signingSecretsFile`: one secret a line, for systemd credentials or a secret manager; nil when the
    /// secrets are written in the config (`signingSecrets`).
    public var secretsFile: String?
    /// The secrets: from the config, or filled by whoever reads `secretsFile` (the core does no I/O). Two
    /// during a rotation.
    public var secrets: [String]
    /// How far a signature's timestamp may be from this machine's clock, in seconds.
    public var toleranceSeconds: Int64 = 300
    /// The product of lines whose checkout set no `productIdentifier` in its metadata.
    public var defaultProductIdentifier: String?
    /// Paddle only: whose secrets these are, sandbox's or production's (Paddle's payloads do not say).
    /// Stripe's events carry `livemode`.
    public var environment: TokenEnvironment?
    /// The largest body read on `path` (Stripe's events are pretty-printed and can reach tens of KB).
    public var maxBodyBytes: Int = 262_144

    public init(provider: PaymentProvider, path: String, secretsFile: String? = nil, secrets: [String] = []) {
        self.provider = provider
        self.path = path
        self.secretsFile = secretsFile
        self.secrets = secrets
    }

    /// How every secret of this provider starts: a secret from elsewhere (an API key) would verify nothing.
    public var secretPrefix: String {
        switch provider {
        case .stripe: "whsec_"
        case .paddle: "pdl_ntfset_"
        }
    }

    /// The problem with secrets read from a file or the config, or nil.
    public func secretsProblem(_ secrets: [String]) -> String? {
        if secrets.isEmpty { return "holds no secret" }
        if let bad = secrets.first(where: { !$0.hasPrefix(secretPrefix) || $0.utf8.count < secretPrefix.utf8.count + 8 }) {
            return
                "holds a secret that is not a \(provider.rawValue) webhook signing secret (\(secretPrefix)…): \(String(bad.prefix(secretPrefix.utf8.count + 2)))…"
        }
        return nil
    }

    /// Secrets from a file's text: one a line, blank lines and `#` comments skipped.
    public static func secrets(fromFile text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: " \t\r") }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

/// `paymentProviders`: the receivers configured (none, one or both).
public struct PaymentProvidersSettings: Sendable, Equatable {
    public var providers: [PaymentProviderSettings] = []
    public init(providers: [PaymentProviderSettings] = []) { self.providers = providers }
    public subscript(_ provider: PaymentProvider) -> PaymentProviderSettings? { providers.first { $0.provider == provider } }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = self
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}
