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
