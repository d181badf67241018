/// A provider's webhook event read into what linkout does with it: which token it is about (carried by the
/// event, or found through the provider's ids bound earlier), which ids it binds to that token for later
/// events, and its effect. Made by `StripeEvent` and `PaddleEvent` from the verified body; pure data.
public struct ProviderEvent: Sendable, Equatable {
    public var provider: PaymentProvider
    /// Stripe `id` (`evt_…`), Paddle `event_id`: stable across the provider's retries, the key of "once".
    public var eventId: String
    public var type: String
    /// Stripe's `livemode`; nil for Paddle, whose payloads carry no such flag (the secret's environment decides).
    public var live: Bool?
    /// When the provider says it happened, Unix ms.
    public var occurredAt: Int64
    /// The id of the object the event is about (`cs_…`, `in_…`, `txn_…`): for the log and report status.
    public var objectId: String
    /// The `externalPurchaseId` the event itself carries (Stripe `client_reference_id` or metadata, Paddle
    /// `custom_data`), as sent: it may be something else entirely (a checkout's own reference).
    public var externalPurchaseId: String?
    /// The provider's ids this event ties to its token, so that later events naming only them (a refund's
    /// payment intent, a renewal's subscription) find it.
    public var binds: [String]
    /// Ids whose binding names the token, tried in order when the event carries none; the first is the one a
    /// parked event waits for.
    public var findBy: [String]
    public var effect: ProviderEffect

    public init(
        provider: PaymentProvider, eventId: String, type: String, live: Bool?, occurredAt: Int64, objectId: String,
        externalPurchaseId: String? = nil, binds: [String] = [], findBy: [String] = [], effect: ProviderEffect
    ) {
        self.provider = provider
        self.eventId = eventId
        self.type = type
        self.live = live
        self.occurredAt = occurredAt
        self.objectId = objectId
        self.externalPurchaseId = externalPurchaseId
        self.binds = binds
        self.findBy = findBy
        self.effect = effect
    }
}

public enum ProviderEffect: Sendable, Equatable {
    /// Nothing to do, and why (a type linkout does not read, a state that sells nothing): answered 200.
    case ignore(String)
    /// Only ties ids to the token (a subscription's checkout, a payment still pending).
    case bind
    /// One bought line: a one-time buy or a subscription's period.
    case sale(ProviderSale)
    /// One refund (or lost chargeback) of a line bought earlier.
    case refund(ProviderRefund)
    /// Paddle: an address's country, which its transactions name only by `address_id`.
    case address(id: String, countryAlpha2: String)
    /// Something a person must decide (a reversed chargeback, a kind of sale linkout does not map).
    case review(String)
}

/// A sale as the provider states it, amounts already in milli-units of `currency`.
public struct ProviderSale: Sendable, Equatable {
    public struct Subscription: Sendable, Equatable {
        public var event: SubscriptionEvent
        /// The provider's subscription id (`sub_…`): its SUBSCRIPTION_START line is what later lines name.
        public var subscriptionId: String
        public var start: Int64
        public var end: Int64

        public init(event: SubscriptionEvent, subscriptionId: String, start: Int64, end: Int64) {
            self.event = event
            self.subscriptionId = subscriptionId
            self.start = start
            self.end = end
        }
    }

    public var lineItemId: String
    public var creationDate: Int64
    /// nil: a one-time buy.
    public var subscription: Subscription?
    /// `metadata.productIdentifier` (Stripe) or `custom_data.productIdentifier` (Paddle), if set.
    public var productIdentifier: String?
    public var quantity: Int64
    public var currency: String
    public var amountTaxInclusive: Int64
    public var taxAmount: Int64
    /// ISO 3166-1 alpha-2 as the provider sends it; nil when it must come from `addressId`.
    public var countryAlpha2: String?
    /// Paddle's `address_id`, whose country an `address.*` event tells.
    public var addressId: String?

    public init(
        lineItemId: String, creationDate: Int64, subscription: Subscription? = nil, productIdentifier: String? = nil,
        quantity: Int64 = 1, currency: String, amountTaxInclusive: Int64, taxAmount: Int64, countryAlpha2: String? = nil,
        addressId: String? = nil
    ) {
        self.lineItemId = lineItemId
        self.creationDate = creationDate
        self.subscription = subscription
        self.productIdentifier = productIdentifier
        self.quantity = quantity
        self.currency = currency
        self.amountTaxInclusive = amountTaxInclusive
        self.taxAmount = taxAmount
        self.countryAlpha2 = countryAlpha2
        self.addressId = addressId
    }
}

/// A refund as the provider states it, amounts in milli-units of `currency`.
public struct ProviderRefund: Sendable, Equatable {
    public var lineItemId: String
    public var creationDate: Int64
    /// The id bound to the line it refunds: Stripe's payment intent, Paddle's transaction.
    public var refundOf: String
    public var currency: String
    public var amountTaxInclusive: Int64
    /// nil when the provider gives no split (a Stripe refund): prorated from the bought line.
    public var taxAmount: Int64?

    public init(lineItemId: String, creationDate: Int64, refundOf: String, currency: String, amountTaxInclusive: Int64, taxAmount: Int64?) {
        self.lineItemId = lineItemId
        self.creationDate = creationDate
        self.refundOf = refundOf
        self.currency = currency
        self.amountTaxInclusive = amountTaxInclusive
        self.taxAmount = taxAmount
    }
}

/// Why a verified body is not an event linkout can read: answered 400, nothing stored.
public struct ProviderEventError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
