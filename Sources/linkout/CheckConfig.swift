import ArgumentParser
import LinkOutCore
import LinkOutServer

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a config: exit 0 with what it turns on, or 1 with one line per problem.")

    @OptionGroup var config: ConfigOption

    @Flag(
        help:
            "Check the config's own rules only, not this machine (pages, files, folders, ports, GeoIP database): for a config checked away from the host it is meant for."
    )
    var rulesOnly = false

    func run() throws {
        let loaded: GatewayConfig
        if rulesOnly {
            loaded = try config.load()
        } else {
            // serve's own check, without making anything: every problem that would keep serve from starting.
            let (checked, ready) = try config.loadForServing { loaded in
                Preflight.check(
                    loaded, store: storePath(option: nil, config: loaded),
                    spoolPath: loaded.storeOutage.spoolPath ?? StoreOutageSettings.defaultSpoolPath, serving: false)
            }
            loaded = checked
            for note in ready.notes { printError("note: \(config.config): \(note)") }
        }
        print("\(config.config): OK (\(Self.summary(loaded)))")
    }

    /// What the config turns on, so an OK does not hide that reporting (or anything else) is off.
    static func summary(_ config: GatewayConfig) -> String {
        let countries = Set(config.links.flatMap(\.servedCountries)).sorted().joined(separator: " ")
        let reporting = config.reporting.map { "reporting on (key \($0.keyId))" } ?? "reporting OFF: no token is sent to Apple"
        let api = config.api.map { "api \($0.listen)" } ?? "no api"
        let notifications = config.notifications.map { "notifications \($0.path)" } ?? "no notifications"
        let admin = config.server.adminListen.map { "admin \($0)" + (config.server.adminKeysFile == nil ? "" : " with keys") } ?? "no admin"
        // Payment providers only when configured: most configs have none, and their OK line stays as it was.
        let providers = config.paymentProviders.providers.map { "; \($0.provider.rawValue) webhooks \($0.path)" }.joined()
        return
            "\(config.apps.count) apps, \(config.links.count) links; countries: \(countries); \(reporting); \(api); \(notifications); \(admin)\(providers)"
    }
}
