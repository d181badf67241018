import LinkOutCore

/// A notification as kept.
public struct StoredNotification: Sendable, Equatable {
    public var notificationUUID: String
    public var notificationType: String
    public var subtype: String?
    public var signedDate: Int64
    public var externalPurchaseId: String?
    public var environment: String
    public var outcome: String
    public var receivedAt: Int64
}
