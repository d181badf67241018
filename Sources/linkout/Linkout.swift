import ArgumentParser
import LinkOutServer

/// The `linkout` command: parses arguments and wires the targets together, nothing more.
@main
struct Linkout: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "linkout",
        abstract: "The link-out redirect gateway for StoreKit external purchase links.",
        version: linkoutVersion,
        subcommands: [
            Serve.self, CheckConfig.self, Tokens.self, Store.self, Transactions.self, Report.self, Statement.self, APIKey.self,
            MintToken.self, Plist.self,
        ],
        defaultSubcommand: nil)
}
