import ArgumentParser
import LinkOutCore

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a config: exit 0, or 1 with one line per problem.")

    @OptionGroup var config: ConfigOption

    func run() throws {
        let loaded = try config.load()
        let countries = Set(loaded.links.map(\.country)).sorted().joined(separator: " ")
        print("\(config.config): OK (\(loaded.apps.count) apps, \(loaded.links.count) links; countries: \(countries))")
    }
}
