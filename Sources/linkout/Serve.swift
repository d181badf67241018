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

    @Option(
        help: ArgumentHelp("The admin listener (/metrics, /healthz, /readyz), overriding the config, or 'off'.", valueName: "host:port"))
    var adminListen: String?

    @Option(
        help: ArgumentHelp("The checkout's API listener (POST /v1/line-items), overriding the config's api.listen.", valueName: "host:port")
    )
    var apiListen: String?

    @Option(help: "Event-loop threads, overriding the config's server.threads; 0 is one per core, as in the config.")
    var threads: Int?

    @OptionGroup var storeOption: StoreOption

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
        if let threads, !(0...256).contains(threads) {
            throw ValidationError("--threads must be from 0 (one per core) to 256")
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

    /// The config keys the command line set, each with its option, for the problems found with them.
    var overriddenKeys: [(key: String, option: String)] {
        [
            listen.map { _ in ("server.listen", "--listen") }, adminListen.map { _ in ("server.adminListen", "--admin-listen") },
            apiListen.map { _ in ("api.listen", "--api-listen") }, accessLog.map { _ in ("accessLog.destination", "--access-log") },
            storeOption.store.map { _ in ("store", "--store") }, spool.map { _ in ("storeOutage.spoolPath", "--spool") },
        ].compactMap { $0 }
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

    func run() throws {
        // First, before any thread exists: a signal must only ever reach the thread that waits for it.
        LinkOutServer.blockHandledSignals()
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let json = logFormat == "json"
        let operatorSink = LogSink(fd: STDERR_FILENO, autoFlush: true)
        // The one clock of the process: the log's times, and every part's (`ServeSetup.clock`).
        let clock = TimeSource.system
        LoggingSystem.bootstrap { label in
            if json {
                var handler = JSONLinesLogHandler(label: label, sink: operatorSink, clock: clock)
                handler.logLevel = level
                return handler
            }
            // One physical line per record, whatever the message holds (a libpq error's newlines).
            var handler = OneLineLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "linkout")

        // The same check as check-config's, making the folders that are missing.
        var spoolPath = ""
        let (gatewayConfig, ready) = try config.loadForServing(applying: applyOverrides, overridden: overriddenKeys) { loaded in
            spoolPath = spool ?? loaded.storeOutage.spoolPath ?? StoreOutageSettings.defaultSpoolPath
            return Preflight.check(loaded, store: storeOption.location(loaded), spoolPath: spoolPath, serving: true)
        }
        if apiListen != nil, gatewayConfig.api == nil {
            printError(
                "error: --api-listen: \(config.config) has no api section, so there is no API listener to move; add one (api.keysFile, docs/reporting.md)"
            )
            throw ExitCode(1)
        }
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
        // SIGHUP: the same file read again, with the same command-line overrides.
        let command = self
        let setup = ServeSetup(
            config: withStore(gatewayConfig), configPath: config.config, spoolPath: spoolPath, files: ready.files,
            dashboardAssets: Self.dashboardPages(gatewayConfig), accessLogSink: accessLogSink, logger: logger,
            reread: {
                var reread = try command.config.read(forServing: true)
                command.applyOverrides(to: &reread)
                return command.withStore(reread)
            }, clock: clock)
        let server: LinkOutServer
        let listening: Listening
        do {
            server = try LinkOutServer(setup)
            listening = try server.start()
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        // The one line scripts and tests wait for; the port is the real one even when 0 was asked for.
        let others = (listening.admin.map { "admin \($0), " } ?? "") + (listening.api.map { "api \($0), " } ?? "")
        FileHandle.standardOutput.write(
            Data(
                "linkout listening on \(listening.main) (\(others)store \(StoreLocation(setup.config.store).redacted), \(gatewayConfig.links.count) links)\n"
                    .utf8))
        // The same moment for systemd (the unit is Type=notify): `systemctl start` returns now.
        SystemdNotify.send("READY=1")
        server.runUntilSignalled()
    }

    /// The config with `store` set to the store in use (`--store` wins), which is what the server opens
    /// and what a reload compares.
    func withStore(_ config: GatewayConfig) -> GatewayConfig {
        var config = config
        config.storePath = storeOption.location(config)
        return config
    }
}
