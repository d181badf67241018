import LinkOutCore

/// What the payment providers' intake reads and writes about their events, all inside one transaction
/// (`ProviderLedgerStore.withProviderLedger`): the event taken once, the provider's ids bound to tokens, events
/// waiting for a binding, Paddle's addresses, and the line items, stored by the same code as
/// `POST /v1/line-items`'s.
public protocol ProviderLedger: AnyObject {
    /// Keeps an event; false when this provider's event id was taken before (a retry, or another
    /// instance's delivery of the same event): then nothing else is done with it.
    func insertEvent(_ event: ProviderEventRecord) throws -> Bool
    /// What became of a kept event (also of one taken again from parking).
    func setOutcome(
        _ provider: PaymentProvider, eventId: String, _ outcome: ProviderOutcome, externalPurchaseId: String?,
        waitingFor: String?, problem: String?, now: Int64) throws
    func binding(_ provider: PaymentProvider, _ objectId: String) throws -> ProviderBinding?
    /// Binds each of `objectIds` to the token (a binding to another token stays: the first wins), giving a
    /// line to those without one. Returns the ids newly bound or newly given a line.
    func bind(
        _ provider: PaymentProvider, _ objectIds: [String], externalPurchaseId: String, lineItemId: String?, now: Int64
    ) throws -> [String]
    /// Parked and waiting events, of those waiting for one of `keys` (nil: all), oldest first.
    func openEvents(_ provider: PaymentProvider?, waitingFor keys: [String]?) throws -> [ProviderEventRecord]
    func addressCountry(_ provider: PaymentProvider, _ addressId: String) throws -> String?
    func setAddressCountry(_ provider: PaymentProvider, _ addressId: String, country: String, now: Int64) throws
    /// A line item of a token, as stored.
    func lineItem(externalPurchaseId: String, lineItemId: String) throws -> LineItem?
    /// Whether linkout recorded the token.
    func token(_ externalPurchaseId: String) throws -> ExternalPurchaseToken?
    /// `LineItemStore.storeLineItems`, in this transaction.
    func storeLineItemsInTransaction(
        externalPurchaseId: String, lineItemIds: [String], now: Int64,
        _ decide: (ExternalPurchaseToken, [LineItemRow]) throws -> [LineItemWrite]
    ) throws -> LineItemStoreResult
}

/// An event as kept: the body as received (signed bytes), to read again when a parked event's binding comes.
public struct ProviderEventRecord: Sendable, Hashable {
    public var provider: PaymentProvider
    public var eventId: String
    public var type: String
    public var objectId: String
    /// `production` or `sandbox`: the payment's, from Stripe's `livemode` or Paddle's configured secret.
    public var environment: TokenEnvironment
    public var occurredAt: Int64
    public var receivedAt: Int64
    public var outcome: ProviderOutcome
    public var externalPurchaseId: String?
    public var waitingFor: String?
    public var problem: String?
    public var body: String

    public init(
        provider: PaymentProvider, eventId: String, type: String, objectId: String, environment: TokenEnvironment, occurredAt: Int64,
        receivedAt: Int64, outcome: ProviderOutcome, externalPurchaseId: String? = nil, waitingFor: String? = nil, problem: String? = nil,
        body: String
    ) {
        self.provider = provider
        self.eventId = eventId
        self.type = type
        self.objectId = objectId
        self.environment = environment
        self.occurredAt = occurredAt
        self.receivedAt = receivedAt
        self.outcome = outcome
        self.externalPurchaseId = externalPurchaseId
        self.waitingFor = waitingFor
        self.problem = problem
        self.body = body
    }
}

/// What linkout did with a provider's event: `report status`'s columns and the metric's `outcome`.
public enum ProviderOutcome: String, Sendable, CaseIterable {
    /// Its lines stored (or its ids bound, or an address kept).
    case taken
    /// A type or state that sells nothing.
    case ignored
    /// About a payment that did not come through linkout (no token, or none linkout recorded after
    /// `ProviderOutcome.parkedForMs`).
    case unmatched
    /// Waiting for another event (the one that binds its ids, its address, its bought line).
    case parked
    /// Its line cannot be made until the operator acts (a product to configure); tried again.
    case waiting
    /// Kept for a person: a test payment for a production token or the reverse, lines the rules refuse, a
    /// kind linkout does not map. Never sent to Apple.
    case held
    /// The same event again: nothing done (only counted, never kept twice).
    case duplicate

    /// How long a parked event waits for its binding before it is taken for a payment that did not come
    /// through linkout: past both providers' retries of the binding event (Stripe up to 3 days).
    public static let parkedForMs: Int64 = 3 * 86_400_000
}

/// A provider's id bound to a token, and the line it made, if any.
public struct ProviderBinding: Sendable, Equatable {
    public var externalPurchaseId: String
    public var lineItemId: String?

    public init(externalPurchaseId: String, lineItemId: String?) {
        self.externalPurchaseId = externalPurchaseId
        self.lineItemId = lineItemId
    }
}

/// The providers' events by provider and outcome, for `report status` and the dashboard.
public struct ProviderEventCounts: Sendable, Equatable {
    public struct Row: Sendable, Equatable {
        public var provider: String
        public var outcome: String
        public var count: Int64
    }
    public var rows: [Row] = []
    /// The newest parked, waiting and held events, with why.
    public var open: [ProviderEventRecord] = []

    public init() {}

    public func count(_ provider: PaymentProvider, _ outcome: ProviderOutcome) -> Int64 {
        rows.first { $0.provider == provider.rawValue && $0.outcome == outcome.rawValue }?.count ?? 0
    }
}
