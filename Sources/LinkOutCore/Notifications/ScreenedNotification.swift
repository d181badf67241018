import X509

/// A notification that passed `NotificationVerifier.screen`: opened, its header and certificates checked
/// as far as names and dates go. Not yet trusted: `NotificationVerifier.verify(_:)` checks the signatures.
/// What the loop thread hands to the intake thread, so nothing is decoded twice.
public struct ScreenedNotification: Sendable {
    enum Chain: Sendable {
        /// The chain's verdict was cached: the leaf's key.
        case trusted(ChainVerdictCache.LeafKey)
        /// Parsed and screened, its signatures not yet checked; `window` is where its verdict may be kept.
        case unverified(leaf: Certificate, intermediate: Certificate, window: ClosedRange<Int64>?)
    }

    let envelope: NotificationEnvelope
    let key: ChainVerdictCache.Key
    let chain: Chain

    /// Whether the chain's signatures are still to be checked (a chain not seen before).
    public var needsChainVerification: Bool {
        if case .unverified = chain { return true }
        return false
    }

    /// The signed body's size, for the log.
    public var signedBytes: Int { envelope.signingInput.count + envelope.signature.count }
}
