import ArgumentParser
import LinkOutCore
import LinkOutServer

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a config: exit 0, or 1 with one line per problem.")

    @OptionGroup var config: ConfigOption

    @Flag(help: "Check the config's own rules only, not this machine (pages, folders, ports, GeoIP database): for a config checked away from the host it is meant for.")
    var rulesOnly = false

    func run() throws {
        let loaded = try config.load(forServing: !rulesOnly)
        // serve's pre-flight, without making anything: what would keep serve from starting.
        let spoolPath = loaded.storeOutage.spoolPath ?? StoreOutageSettings.defaultSpoolPath
        if !rulesOnly {
            switch Preflight.check(loaded, store: storePath(option: nil, config: loaded), spoolPath: spoolPath, creatingFolders: false) {
            case .failure(let error):
                for problem in error.problems { printError("error: \(config.config): \(problem)") }
                throw ExitCode(1)
            case .success(let ready):
                for note in ready.notes { printError("note: \(config.config): \(note)") }
            }
        }
        let countries = Set(loaded.links.flatMap(\.servedCountries)).sorted().joined(separator: " ")
        print("\(config.config): OK (\(loaded.apps.count) apps, \(loaded.links.count) links; countries: \(countries))")
    }
}
