/// Apple's `subscriptionEvent` of a subscription line item.
public enum SubscriptionEvent: String, Sendable, Equatable, CaseIterable {
    case subscriptionStart = "SUBSCRIPTION_START"
    case renewal = "RENEWAL"
    case subscriptionChange = "SUBSCRIPTION_CHANGE"
    case subscriptionPayment = "SUBSCRIPTION_PAYMENT"
}
