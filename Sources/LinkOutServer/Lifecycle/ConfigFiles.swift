import Foundation
import LinkOutCore

/// The files a config names that serving reads, read: the shopper pages, the GeoIP database, the API's
/// and the admin listener's keys, Apple's roots for notifications. Read by the pre-flight (so by
/// `check-config` and `serve` at start) and again by each reload, by this one code, so that a bad file is
/// refused with the same line at start and on SIGHUP.
package struct ConfigFiles: Sendable {
    package var pages: Pages
    package var geoIP: GeoIPDatabase?
    /// The checkout's API keys, when the config has an `api` listener.
    package var apiKeys: APIKeys?
    /// The operators' keys for the admin listener, when `server.adminKeysFile` names them.
    package var adminKeys: APIKeys?
    /// Apple's notifications' verifier with its roots read, when the config has `notifications`.
    package var notificationVerifier: NotificationVerifier?

    /// Reads every file; each that cannot be read or is not what it should be adds a line to `problems`
    /// (`key: what is wrong`), and what could be read is returned all the same.
    package static func read(_ config: GatewayConfig, problems: inout [String]) -> ConfigFiles {
        var files = ConfigFiles(pages: Pages.builtIn)
        do { files.pages = try Pages.load(config) } catch { problems.append("\(error)") }
        if let path = config.geoIPDatabase {
            do { files.geoIP = try GeoIPDatabase(path: path) } catch { problems.append("geoip.database: \(error)") }
        }
        if let api = config.api {
            files.apiKeys = keys(api.keysFile, key: "api.keysFile", refusingEmpty: true, problems: &problems)
        }
        if let file = config.server.adminKeysFile {
            files.adminKeys = keys(file, key: "server.adminKeysFile", refusingEmpty: false, problems: &problems)
        }
        if var notifications = config.notifications {
            for file in notifications.rootCertificateFiles {
                if let data = FileManager.default.contents(atPath: file) {
                    notifications.rootCertificatesPEM.append(String(decoding: data, as: UTF8.self))
                } else {
                    problems.append("notifications.rootCertificates: \(Unreadable.message(file))")
                }
            }
            do {
                files.notificationVerifier = try NotificationVerifier(rootsPEM: notifications.trustedRootsPEM, apps: config.apps)
            } catch {
                problems.append("notifications.rootCertificates: \(error)")
            }
        }
        return files
    }

    /// A keys file (`NAME SHA256-HEX` lines) read and parsed.
    private static func keys(_ file: String, key: String, refusingEmpty: Bool, problems: inout [String]) -> APIKeys? {
        guard let data = FileManager.default.contents(atPath: file) else {
            problems.append("\(key): \(Unreadable.message(file))")
            return nil
        }
        if refusingEmpty, let nothing = Preflight.nothingIn(file, data) {
            problems.append("\(key): \(nothing)")
            return nil
        }
        switch APIKeys.parse(String(decoding: data, as: UTF8.self)) {
        case .success(let keys): return keys
        case .failure(let error):
            problems += error.problems.map { "\(key): \(file) \($0)" }
            return nil
        }
    }
}

extension ServingState {
    /// The state a config and the files it names make, at start and on each reload (one initialiser for both).
    package init(config: GatewayConfig, files: ConfigFiles, health: DestinationHealthBoard? = nil) {
        self.init(
            config: config, pages: files.pages, geoIP: files.geoIP, apiKeys: files.apiKeys, adminKeys: files.adminKeys, health: health)
    }
}
