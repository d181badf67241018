/// The settings a running server reads once, at start: its listeners and threads, the store and how it
/// rides out an outage, the access log, and the parts that run on threads of their own with what they
/// were given (reporting and its key, the API, Apple's notifications and their roots, the payment
/// providers and their secrets). A reload serves everything else in the new config at once; these it
/// names, because they wait for a restart. The one list of them, so the reload's warning, the docs and
/// the server agree.
public struct RestartOnlySettings: Equatable, Sendable {
    var server: ServerSettings
    var store: String?
    var storeOutage: StoreOutageSettings
    var accessLog: AccessLogSettings
    var reporting: ReportingSettings?
    var api: APISettings?
    var notifications: NotificationSettings?
    var paymentProviders: PaymentProvidersSettings

    /// The keys files are not part of it: a reload reads them again (`ServingState`), so a key removed
    /// is refused at once.
    public init(_ config: GatewayConfig) {
        server = config.server
        server.adminKeysFile = nil
        store = config.storePath
        storeOutage = config.storeOutage
        accessLog = config.accessLog
        // The files' contents are part of it: a key or secret replaced on disk is a change, too.
        reporting = config.reporting
        api = config.api
        api?.keysFile = ""
        notifications = config.notifications
        paymentProviders = config.paymentProviders
    }

    /// The config keys whose settings differ in `new`, in the config's order; empty: none.
    public func changed(in new: RestartOnlySettings) -> [String] {
        var keys: [String] = []
        if new.server != server { keys.append("server") }
        if new.store != store { keys.append("store") }
        if new.storeOutage != storeOutage { keys.append("storeOutage") }
        if new.accessLog != accessLog { keys.append("accessLog") }
        if new.reporting != reporting { keys.append("reporting") }
        if new.api != api { keys.append("api") }
        if new.notifications != notifications { keys.append("notifications") }
        if new.paymentProviders != paymentProviders { keys.append("paymentProviders") }
        return keys
    }
}
