import ArgumentParser
import Foundation
import LinkOutCore

struct MintToken: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mint-token",
        abstract: "Print a well-formed externalPurchaseToken, to try the flow without a device.",
        discussion: "Tokens are not signed, so this makes exactly what StoreKit would send.")

    @Option(name: .customLong("bundle-id"), help: "The app's bundle ID.")
    var bundleId: String

    @Option(name: .customLong("app-apple-id"), help: "The app's App Store ID.")
    var appAppleId: Int64

    /// Sandbox unless asked otherwise: a made-up token in a store that reports goes to Apple's sandbox,
    /// never to production, where it would be a report of a tap that never happened.
    @Flag(
        help:
            "The token's environment: --sandbox (the default: its externalPurchaseId starts with SANDBOX_, so a store that reports sends it to Apple's sandbox) or --production (an id Apple's production API would be sent: only for a store that does not report to Apple)."
    )
    var environment: TokenEnvironment = .sandbox

    @Option(help: "A custom-link token type: ACQUISITION, SERVICES, IN_APP or LINK_OUT.")
    var type: String?

    @Option(help: "tokenCreationDate in Unix milliseconds (default: now).")
    var created: Int64?

    @Option(help: "tokenExpirationDate in Unix milliseconds (custom-link tokens; default: created + 1 hour).")
    var expires: Int64?

    @Option(help: "The externalPurchaseId's UUID (default: a new one).")
    var id: String?

    @Option(help: ArgumentHelp("Print a whole link-out URL on this gateway link (e.g. http://127.0.0.1:8080/nl).", valueName: "url"))
    var url: String?

    func validate() throws {
        if let type, TokenType(rawValue: type)?.isKnown != true {
            throw ValidationError("--type must be one of \(TokenType.known.map(\.rawValue).joined(separator: ", "))")
        }
        if expires != nil, type == nil {
            throw ValidationError("--expires is for custom-link tokens: give --type too")
        }
        if let id, UUID(uuidString: id) == nil {
            throw ValidationError("--id must be a UUID")
        }
        if appAppleId <= 0 { throw ValidationError("--app-apple-id must be positive") }
        if let url {
            let lower = url.lowercased()
            guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), !url.contains("?"), !url.contains("#"),
                let parsed = URLComponents(string: url), parsed.host?.isEmpty == false, !parsed.path.isEmpty
            else {
                throw ValidationError(
                    "--url must be an http:// or https:// link path on the gateway, without a query, such as http://127.0.0.1:8080/nl")
            }
        }
    }

    func run() throws {
        let now = TimeSource.system.nowMs()
        let createdAt = created ?? now
        let uuid = id ?? UUID().uuidString.lowercased()
        let tokenType = type.flatMap(TokenType.init(rawValue:))
        let token = ExternalPurchaseToken(
            appAppleId: appAppleId, bundleId: bundleId, tokenCreationDate: createdAt,
            externalPurchaseId: environment == .sandbox ? "SANDBOX_\(uuid)" : uuid,
            tokenType: tokenType, tokenExpirationDate: tokenType == nil ? nil : (expires ?? createdAt + 3_600_000))
        let minted = TokenMinter.mint(token)
        if let url {
            let encodedBundle =
                bundleId.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+")))
                ?? bundleId
            print("\(url)?externalPurchaseToken=\(minted)&bundleId=\(encodedBundle)")
        } else {
            print(minted)
        }
    }
}

extension TokenEnvironment: EnumerableFlag {}
