import ArgumentParser
import Foundation
import LinkOutCore
import LinkOutServer
import LinkOutStore
import Logging

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve link-out requests.")

    @OptionGroup var config: ConfigOption

    @Option(help: ArgumentHelp("Address to listen on, overriding the config (port 0 picks a free port).", valueName: "host:port"))
    var listen: String?

    @Option(help: ArgumentHelp("The admin listener (/metrics, /healthz, /readyz), overriding the config, or 'off'.", valueName: "host:port"))
    var adminListen: String?

    @Option(help: ArgumentHelp("The checkout's API listener (POST /v1/line-items), overriding the config's api.listen.", valueName: "host:port"))
    var apiListen: String?

    @Option(help: "Event-loop threads, overriding the config (default: one per core).")
    var threads: Int?

    @Option(help: ArgumentHelp("The store, overriding the config: a SQLite file path, or a postgres:// URL.", valueName: "path|url"))
    var store: String?

    @Option(help: ArgumentHelp("The outage spool of a PostgreSQL store, overriding the config's storeOutage.spoolPath.", valueName: "path"))
    var spool: String?

    @Option(help: ArgumentHelp("The access log, overriding the config: stdout, stderr, off or a file path.", valueName: "destination"))
    var accessLog: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(help: "Operator log format on standard error: text or json (one JSON object per line).")
    var logFormat: String = "text"

    func validate() throws {
        if let listen, ListenAddress.parse(listen) == nil {
            throw ValidationError("--listen must be HOST:PORT, such as 127.0.0.1:8080 or [::1]:8080")
        }
        if let adminListen, adminListen != "off", ListenAddress.parse(adminListen) == nil {
            throw ValidationError("--admin-listen must be HOST:PORT, such as 127.0.0.1:9464, or off")
        }
        if let apiListen, ListenAddress.parse(apiListen) == nil {
            throw ValidationError("--api-listen must be HOST:PORT, such as 127.0.0.1:8081")
        }
        if let threads, !(1...256).contains(threads) {
            throw ValidationError("--threads must be from 1 to 256")
        }
        if logFormat != "text" && logFormat != "json" {
            throw ValidationError("--log-format must be text or json")
        }
        if spool == "" {
            throw ValidationError("--spool must be a file path")
        }
        if accessLog == "" {
            throw ValidationError("--access-log must be stdout, stderr, off or a file path")
        }
        if Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    /// The command line wins over the config file.
    func applyOverrides(to config: inout GatewayConfig) {
        if let listen { config.server.listen = ListenAddress.parse(listen)! }
        if let threads { config.server.threads = threads }
        if let adminListen { config.server.adminListen = adminListen == "off" ? nil : ListenAddress.parse(adminListen) }
        if let apiListen, let address = ListenAddress.parse(apiListen) { config.api?.listen = address }
        switch accessLog {
        case nil: break
        case "off": config.accessLog.destination = .off
        case "stdout": config.accessLog.destination = .standardOutput
        case "stderr": config.accessLog.destination = .standardError
        case let path?: config.accessLog.destination = .file(path)
        }
    }

    func loadPages(_ config: GatewayConfig) throws -> Pages {
        try Pages.load(config)
    }

    /// Where the dashboard's pages are read from: the config's `publicDir`, else the copy beside this
    /// binary. The shopper pages are built in, the dashboard's are not, so a config without `publicDir`
    /// finds them where `make install` and the package put them (BINDIR/../share/linkout/Public/admin), or,
    /// run from a clone's build folder (.build/TRIPLE/CONFIGURATION/linkout), in the clone's Public/admin.
    static func dashboardPages(_ config: GatewayConfig) -> String? {
        if let folder = config.publicDirectory { return (folder as NSString).appendingPathComponent("admin") }
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let binary = URL(fileURLWithPath: executable).deletingLastPathComponent()
        return ["../share/linkout/Public/admin", "../../../Public/admin"]
            .map { binary.appendingPathComponent($0).standardized.path }
            .first { FileManager.default.fileExists(atPath: $0 + "/dashboard.html") }
    }

    /// The GeoIP database the config names, opened; nil when it names none.
    func openGeoIP(_ config: GatewayConfig) throws -> GeoIPDatabase? {
        try config.geoIPDatabase.map { try GeoIPDatabase(path: $0) }
    }

    /// At start-up, what the outbox holds from before: a paused reporter, reports waiting to be sent again
    /// and why, so the operator sees it where they look first.
    func logReportingState(_ store: any ReportingStore, logger: Logger) {
        guard let health = try? store.health(now: Reporter.now(), waitingLimit: 0) else { return }
        if let until = health.pausedUntil {
            logger.critical("reporting is PAUSED until \(UTCDate.format(milliseconds: until)): Apple refused the key (401) before this start; check reporting.keyFile, keyId, issuerId and the apps' bundle IDs")
        }
        guard health.open > 0 else {
            logger.notice("reporting is on: no report waiting")
            return
        }
        var metadata: Logger.Metadata = [
            "toSend": "\(health.toSend)", "retrying": "\(health.retrying + health.sending)",
        ]
        if let next = health.nextTryAt { metadata["nextTry"] = "\(UTCDate.format(milliseconds: next))" }
        if let error = health.lastError { metadata["lastError"] = "\(error.answer.prefix(300))" }
        logger.notice("reporting is on: reports waiting in the outbox (linkout report status lists them)", metadata: metadata)
    }

    func run() throws {
        // First, before any thread exists: a signal must only ever reach the thread that waits for it.
        LinkOutServer.blockHandledSignals()
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let json = logFormat == "json"
        let operatorSink = LogSink(fd: STDERR_FILENO, autoFlush: true)
        LoggingSystem.bootstrap { label in
            if json {
                var handler = JSONLinesLogHandler(label: label, sink: operatorSink)
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "linkout")

        // The same check as check-config's, making the folders that are missing.
        var spoolPath = ""
        let (gatewayConfig, ready) = try config.loadForServing(applying: applyOverrides) { loaded in
            spoolPath = spool ?? loaded.storeOutage.spoolPath ?? StoreOutageSettings.defaultSpoolPath
            return Preflight.check(loaded, store: storePath(option: store, config: loaded), spoolPath: spoolPath, creatingFolders: true)
        }
        let path = storePath(option: store, config: gatewayConfig)
        let (pages, geoIP, apiKeys, notificationVerifier, adminKeys) = (ready.pages, ready.geoIP, ready.apiKeys, ready.notificationVerifier, ready.adminKeys)
        for note in ready.notes { logger.notice("\(note)") }
        let accessLogSink: LogSink?
        do {
            switch gatewayConfig.accessLog.destination {
            case .off: accessLogSink = nil
            case .standardOutput: accessLogSink = LogSink(fd: STDOUT_FILENO, autoFlush: false)
            // The operator log's sink: one sink, one write lock, per descriptor.
            case .standardError: accessLogSink = operatorSink
            case .file(let path): accessLogSink = try LogSink.file(path, autoFlush: false)
            }
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        let tokenStore: any TokenStore
        do {
            tokenStore = try openStoreForServing(path, outage: gatewayConfig.storeOutage, spoolPath: spoolPath, logger: logger)
        } catch {
            printError("error: cannot open the store: \(error)")
            throw ExitCode(1)
        }

        // SIGHUP: the same file read again, with the same command-line overrides.
        let reloadCommand = self
        let outageAtStart = gatewayConfig.storeOutage
        // The reporter and the API listener keep what they started with (the key's text aside: a reload
        // reads the file again, and only the settings are compared).
        let reportingAtStart = gatewayConfig.reporting.map { settings -> ReportingSettings in
            var withoutKey = settings
            withoutKey.privateKeyPEM = ""
            return withoutKey
        }
        let apiAtStart = gatewayConfig.api
        // One health board for the life of the process: a reload's gateway reads the same slots, so a
        // destination unchanged by the reload keeps its state.
        let healthBoard = DestinationHealthBoard()
        let server = LinkOutServer(
            serving: ServingState(gateway: Gateway(config: gatewayConfig, health: healthBoard), pages: pages, geoIP: geoIP),
            store: tokenStore, settings: gatewayConfig.server, logger: logger, healthBoard: healthBoard,
            accessLogSink: accessLogSink
        ) {
            var reloaded = try reloadCommand.config.read(forServing: true)
            reloadCommand.applyOverrides(to: &reloaded)
            if storePath(option: reloadCommand.store, config: reloaded) != path {
                logger.warning("the store path changed in the config; it takes effect only on a restart")
            }
            // The key's text aside, as at start: the file is read again, not compared.
            var reloadedReporting = reloaded.reporting
            reloadedReporting?.privateKeyPEM = ""
            if reloadedReporting != reportingAtStart || reloaded.api != apiAtStart {
                logger.warning("reporting or api settings changed in the config; they take effect only on a restart")
            }
            if reloaded.storeOutage != outageAtStart {
                logger.warning("storeOutage settings changed in the config; they take effect only on a restart")
            }
            // Everything that can fail first: the gateway registers its health targets on the board.
            let pages = try reloadCommand.loadPages(reloaded)
            let geoIP = try reloadCommand.openGeoIP(reloaded)
            return ServingState(gateway: Gateway(config: reloaded, health: healthBoard), pages: pages, geoIP: geoIP)
        }
        // The dashboard reads the store on the admin thread's own connection, opened on its first request:
        // a chart never waits on the writer's connection, and a store not yet there does not stop serve.
        let dashboardTimeoutMs = gatewayConfig.storeOutage.timeoutMs
        server.dashboard = DashboardSettings(
            assetsDirectory: Self.dashboardPages(gatewayConfig),
            keys: adminKeys,
            noPurchaseAfterMs: gatewayConfig.reporting?.noPurchaseAfterMs ?? ReportingSettings.defaultNoPurchaseAfterMs,
            reportingEnabled: gatewayConfig.reporting != nil
        ) {
            switch StoreLocation(path) {
            case .postgres(let url): try DashboardStore(postgresURL: url, timeoutMs: dashboardTimeoutMs)
            case .sqlite(let file): try DashboardStore(sqlitePath: file)
            }
        }
        // Reporting's connections (the reporter's, the notification intake's, the API's). In spool mode serve
        // starts while PostgreSQL is down, and so do they: each connects once the server answers, failing
        // meanwhile as in any outage (the API and the intake answer 503, the reporter tries again).
        func reportingStore(for user: String) throws -> any ReportingStore {
            guard gatewayConfig.storeOutage.mode == .spool, case .postgres(let url) = StoreLocation(path) else {
                return try openReportingStore(path, timeoutMs: gatewayConfig.storeOutage.timeoutMs)
            }
            let opened = try SQLReportingStore.connectingWhenReachable(postgresURL: url, timeoutMs: gatewayConfig.storeOutage.timeoutMs)
            if let unreachable = opened.unreachable {
                logger.warning("PostgreSQL unreachable at start; \(user) connects once it answers", metadata: ["error": "\(unreachable)"])
            }
            return opened.store
        }
        if let notifications = gatewayConfig.notifications, let notificationVerifier {
            do {
                // The intake thread's own connection: a notification never waits on the reporter's or the API's.
                server.takeNotifications(
                    settings: notifications, verifier: notificationVerifier, store: try reportingStore(for: "the notification intake"))
            } catch {
                printError("error: cannot take Apple's notifications: \(error)")
                throw ExitCode(1)
            }
        }
        let bound: ListenAddress
        do {
            bound = try server.start()
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        if let reporting = gatewayConfig.reporting {
            do {
                let store = try reportingStore(for: "the reporter")
                logReportingState(store, logger: logger)
                try server.startReporting(settings: reporting, store: store)
            } catch {
                printError("error: cannot start reporting: \(error)")
                server.stop()
                throw ExitCode(1)
            }
        } else {
            logger.warning("reporting is OFF: \(config.config) has no reporting section, so no token is reported to Apple, which expects every one reported (README: Reporting to Apple)")
            // The tokens' gauges and the daily count in the log all the same; a store that cannot be opened
            // for it (PostgreSQL down at start) is said, and serving goes on.
            do {
                server.watchReportingOff(store: try openReportingStore(path, timeoutMs: gatewayConfig.storeOutage.timeoutMs), config: config.config)
            } catch {
                logger.error("reporting is OFF, and its tokens cannot be counted: \(error)")
            }
        }
        var apiAddress: ListenAddress?
        if let api = gatewayConfig.api, let keys = apiKeys {
            do {
                // The API thread's own connection: a checkout's request never waits on the reporter's.
                let apiStore = try reportingStore(for: "the API")
                let intake = LineItemIntake(store: apiStore, signingSecret: gatewayConfig.signing?.secret)
                apiAddress = try server.startAPI(settings: api, keys: keys, intake: intake, registrationStore: apiStore)
            } catch {
                printError("error: cannot start the API listener: \(error)")
                server.stop()
                throw ExitCode(1)
            }
        }
        // Said once every listener is bound, so a linkout started after this one sees what it would share.
        // Two started at the same moment with different stores both passed the pre-flight: each looks
        // again, and one that finds the other leaves (both may: neither then splits the shoppers).
        let listeners = [bound] + (server.adminAddress.map { [$0] } ?? []) + (apiAddress.map { [$0] } ?? [])
        PortSharing.announce(listeners, store: path)
        for address in listeners {
            // Only another store's beacon counts now: this process's own socket listens there too.
            guard case .otherStore = PortSharing.verdict(address, store: path), let problem = PortSharing.problem(address, store: path) else { continue }
            printError("error: \(problem)")
            server.stop()
            throw ExitCode(1)
        }
        // The one line scripts and tests wait for; the port is the real one even when 0 was asked for.
        let admin = (server.adminAddress.map { "admin \($0), " } ?? "") + (apiAddress.map { "api \($0), " } ?? "")
        FileHandle.standardOutput.write(Data("linkout listening on \(bound) (\(admin)store \(StoreLocation(path).redacted), \(gatewayConfig.links.count) links)\n".utf8))
        // The same moment for systemd (the unit is Type=notify): `systemctl start` returns now.
        SystemdNotify.send("READY=1")
        server.runUntilSignalled()
    }
}
