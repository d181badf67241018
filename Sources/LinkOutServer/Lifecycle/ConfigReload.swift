import LinkOutCore
import Logging

/// SIGHUP's work, on the main thread: reads the config and the files it names again and, if they are
/// valid, makes the `ServingState` every loop switches to; otherwise says why, and the old one serves on.
/// Connections stay open either way. What only a restart changes (`RestartOnlySettings`) is named.
struct ConfigReload {
    let reread: (@Sendable () throws -> GatewayConfig)?
    /// What a reload cannot change, as the server started with it.
    let restartOnly: RestartOnlySettings
    let health: DestinationHealthBoard
    let metrics: GatewayMetrics
    let logger: Logger

    /// The state to serve from now on, or nil (logged) when there is none.
    func next() -> ServingState? {
        guard let reread else {
            logger.warning("SIGHUP ignored: this server was started without a config file to reload")
            return nil
        }
        var state: ServingState
        let config: GatewayConfig
        do {
            config = try reread()
            var problems: [String] = []
            // Everything that can fail first: the gateway registers its health targets on the board.
            let files = ConfigFiles.read(config, problems: &problems)
            guard problems.isEmpty else { throw PreflightError(problems: problems) }
            state = ServingState(config: config, files: files, health: health)
            state.linkMetrics = metrics.linkMetrics(for: config.links)
        } catch {
            logger.error("config reload refused; still serving the previous config", metadata: ["problems": "\(error)"])
            return nil
        }
        let waiting = restartOnly.changed(in: RestartOnlySettings(config))
        if !waiting.isEmpty {
            logger.warning("settings changed in the config take effect only on a restart: \(waiting.joined(separator: ", "))")
        }
        return state
    }
}
