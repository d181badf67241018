import LinkOutCore
import Logging

/// What `serve` hands the server: the config as checked (the command line's overrides applied, `store`
/// set to the store in use), the files it names, read, and where the logs go. The server opens its
/// stores and builds its parts from this alone.
package struct ServeSetup {
    package var config: GatewayConfig
    /// The config file's path, for the operator's messages.
    package var configPath: String
    /// The outage spool of a PostgreSQL store.
    package var spoolPath: String
    package var files: ConfigFiles
    /// Where the dashboard's pages are; nil: its JSON API only.
    package var dashboardAssets: String?
    /// nil: the access log is off.
    package var accessLogSink: LogSink?
    package var logger: Logger
    /// Reads the config again for SIGHUP (the same file, the same overrides, `store` set as at start);
    /// nil: the server cannot reload.
    package var reread: (@Sendable () throws -> GatewayConfig)?
    /// The one clock every part reads (the time of day for records, the monotonic side for durations,
    /// deadlines and rate limits): `serve` hands in the machine's, a test may hand in its own.
    package var clock: TimeSource

    package init(
        config: GatewayConfig, configPath: String, spoolPath: String, files: ConfigFiles, dashboardAssets: String?,
        accessLogSink: LogSink?, logger: Logger, reread: (@Sendable () throws -> GatewayConfig)?, clock: TimeSource
    ) {
        self.clock = clock
        self.config = config
        self.configPath = configPath
        self.spoolPath = spoolPath
        self.files = files
        self.dashboardAssets = dashboardAssets
        self.accessLogSink = accessLogSink
        self.logger = logger
        self.reread = reread
    }
}

/// Where the server listens, once bound (the real ports when 0 was asked for).
package struct Listening: Sendable {
    package var main: ListenAddress
    package var admin: ListenAddress?
    package var api: ListenAddress?

    package var all: [ListenAddress] { [main] + (admin.map { [$0] } ?? []) + (api.map { [$0] } ?? []) }
}
