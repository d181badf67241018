import ArgumentParser

/// The `linkout` command: parses arguments and wires the targets together, nothing more.
@main
struct Linkout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "linkout",
        abstract: "The link-out redirect gateway for StoreKit external purchase links.",
        subcommands: [Serve.self, CheckConfig.self, Tokens.self, MintToken.self],
        defaultSubcommand: nil)
}
