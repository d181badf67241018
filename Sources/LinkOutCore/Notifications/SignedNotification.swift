/// An App Store Server Notification V2 that passed every check of `NotificationVerifier`.
public struct VerifiedNotification: Sendable, Equatable {
    public var notificationType: String
    /// nil when Apple sent none (some types have no subtype).
    public var subtype: String?
    /// Apple's id for the notification; a retry carries the same one.
    public var notificationUUID: String
    /// Unix ms, when Apple signed it; the chain was verified at this time.
    public var signedDate: Int64
    /// From the token id's `SANDBOX` prefix (or the `environment` member of other types' data).
    public var environment: TokenEnvironment
    /// The app it is for, one of the config's; nil when the type names no app.
    public var bundleId: String?
    /// `externalPurchaseToken`, for `EXTERNAL_PURCHASE_TOKEN` notifications.
    public var token: ExternalPurchaseToken?
    /// The decoded payload as Apple signed it, kept with the notification.
    public var payloadJSON: String

    public init(
        notificationType: String, subtype: String?, notificationUUID: String, signedDate: Int64, environment: TokenEnvironment,
        bundleId: String?, token: ExternalPurchaseToken?, payloadJSON: String
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.signedDate = signedDate
        self.environment = environment
        self.bundleId = bundleId
        self.token = token
        self.payloadJSON = payloadJSON
    }

    /// What linkout does with it (see `NotificationAction`).
    public var action: NotificationAction { NotificationAction(self) }
}

/// What a verified notification makes linkout do. Only the store can tell a known token from an unknown one
/// (in the same transaction that records the notification), so `reportNow` covers both.
public enum NotificationAction: Sendable, Equatable {
    /// `EXTERNAL_PURCHASE_TOKEN` / `UNREPORTED`: a known token's report becomes due now (`LINE_ITEM` or
    /// `NO_LINE_ITEM`); an unknown one is recorded as learnt from Apple and reported `UNRECOGNIZED_TOKEN`.
    case reportNow(ExternalPurchaseToken)
    /// `CREATED` or `ACTIVE_TOKEN_REMINDER`: a custom-link token, recorded with its type and expiry and
    /// reported like any token (`NO_LINE_ITEM` after its window unless line items come).
    case recordCustomLinkToken(ExternalPurchaseToken)
    /// Any other type or subtype: kept and acknowledged, nothing else (Apple adds subtypes over time).
    case keepOnly

    public static let externalPurchaseTokenType = "EXTERNAL_PURCHASE_TOKEN"

    public init(_ notification: VerifiedNotification) {
        guard notification.notificationType == Self.externalPurchaseTokenType, let token = notification.token else {
            self = .keepOnly
            return
        }
        switch notification.subtype {
        case "UNREPORTED": self = .reportNow(token)
        case "CREATED", "ACTIVE_TOKEN_REMINDER": self = .recordCustomLinkToken(token)
        default: self = .keepOnly
        }
    }
}

/// What the store did with a notification, kept with it and counted in `linkout_notifications_total`.
public enum NotificationOutcome: String, Sendable, Equatable, CaseIterable {
    /// UNREPORTED for a token linkout knows: its report is due now (and it is flagged as reminded).
    case reportDue = "report_due"
    /// UNREPORTED for a token already reported (Apple's reminder crossed the report).
    case alreadyReported = "already_reported"
    /// UNREPORTED for a token whose last report Apple refused: it waits for corrected line items.
    case reportBlocked = "report_blocked"
    /// UNREPORTED for a token linkout never saw: recorded and reported UNRECOGNIZED_TOKEN.
    case unrecognized
    /// CREATED / ACTIVE_TOKEN_REMINDER: the custom-link token is recorded.
    case tokenRecorded = "token_recorded"
    /// Any other type or subtype: stored only.
    case stored
    /// The same notificationUUID again (Apple retries): nothing done twice.
    case duplicate
}
