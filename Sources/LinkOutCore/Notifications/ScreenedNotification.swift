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

    /// A chain whose signatures are still to be checked, as the intake counts it: notifications queued with
    /// the same one need it checked once, since the first check's verdict is cached for the rest.
    public struct PendingChain: Hashable, Sendable {
        let key: ChainVerdictCache.Key
    }

    /// nil when the chain's verdict was cached already.
    public var pendingChain: PendingChain? { needsChainVerification ? PendingChain(key: key) : nil }

    /// The signed body's size, for the log.
    public var signedBytes: Int { envelope.signingInput.count + envelope.signature.count }
}
