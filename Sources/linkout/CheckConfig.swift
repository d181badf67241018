import ArgumentParser
import LinkOutCore
import LinkOutServer

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a config: exit 0, or 1 with one line per problem.")

    @OptionGroup var config: ConfigOption

    func run() throws {
        let loaded = try config.load(forServing: true)
        if let path = loaded.geoIPDatabase {
            do {
                _ = try GeoIPDatabase(path: path)
            } catch {
                printError("error: \(config.config): geoip.database: \(error)")
                throw ExitCode(1)
            }
        }
        if let api = loaded.api {
            do {
                _ = try readAPIKeys(api.keysFile)
            } catch {
                printError("error: \(config.config): \(error)")
                throw ExitCode(1)
            }
        }
        if loaded.reporting != nil || loaded.api != nil, case .postgres = StoreLocation(storePath(option: nil, config: loaded)) {
            printError("error: \(config.config): reporting and api need the SQLite store in this version of linkout; PostgreSQL reporting is not built yet")
            throw ExitCode(1)
        }
        let countries = Set(loaded.links.flatMap(\.servedCountries)).sorted().joined(separator: " ")
        print("\(config.config): OK (\(loaded.apps.count) apps, \(loaded.links.count) links; countries: \(countries))")
    }
}
