import ArgumentParser
import Foundation
import LinkOutCore
import LinkOutServer

/// `linkout plist lint` and `linkout plist generate`: the app's Info.plist link keys against Apple's rules
/// and the config. The rules are `PlistLinter` and `PlistGenerator` in the core; this file reads the file.
struct Plist: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check or write the app's SKExternalPurchaseLink / SKExternalPurchaseMultiLink keys.",
        subcommands: [Lint.self, Generate.self])

    /// What the app may do beyond the defaults; shared by both subcommands.
    struct RuleOptions: ParsableArguments {
        @Flag(help: "A qualifying music-streaming app: up to 5 links per country in the EU27, is and no.")
        var musicStreaming = false

        @Flag(name: .customLong("allow-us"), help: "Accept 'us' as a country key (older documents list it).")
        var allowUS = false

        var linterOptions: PlistLinter.Options {
            PlistLinter.Options(musicStreaming: musicStreaming, allowUS: allowUS)
        }
    }

    struct Lint: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check an Info.plist (XML or binary): exit 0, or 1 with one line per finding.",
            discussion: "Each finding is printed as `KEY PATH: CODE: MESSAGE`, such as `SKExternalPurchaseMultiLink.de[1]: has_query: …`.")

        @OptionGroup var config: ConfigOption
        @OptionGroup var rules: RuleOptions

        @Argument(help: ArgumentHelp("The Info.plist to check.", valueName: "Info.plist"))
        var file: String

        func run() throws {
            let loaded = try config.load()
            let links = try readLinks(file)
            let findings = PlistLinter.lint(links, config: loaded, options: rules.linterOptions)
            for finding in findings {
                print(finding.path.isEmpty ? "\(file): \(finding)" : "\(finding)")
            }
            if !findings.isEmpty { throw ExitCode(1) }
            let countries = Set(loaded.links.flatMap(\.servedCountries)).sorted()
            let linkCount = loaded.links.count == 1 ? "1 link" : "\(loaded.links.count) links"
            let countryCount = countries.count == 1 ? "1 country" : "\(countries.count) countries"
            print("\(file): OK (\(linkCount) for \(countryCount): \(countries.joined(separator: " ")))")
        }
    }

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the Info.plist keys for the config's links.",
            discussion: """
                Each link's URL is the base URL followed by the link's path. Countries with one link go under \
                SKExternalPurchaseLink, with several under SKExternalPurchaseMultiLink. Anything the result \
                breaks (several links for a country without --music-streaming, say) is printed as a warning.
                """)

        @OptionGroup var config: ConfigOption
        @OptionGroup var rules: RuleOptions

        @Option(help: ArgumentHelp("The gateway's public origin, https://HOST[:PORT], with no path.", valueName: "url"))
        var baseURL: String

        @Flag(help: "Print a whole plist document instead of the keys alone (lintable, and mergeable with PlistBuddy).")
        var document = false

        func run() throws {
            let loaded = try config.load()
            let links: ExternalPurchaseLinks
            switch PlistGenerator.links(for: loaded, baseURL: baseURL) {
            case .success(let built): links = built
            case .failure(let error):
                printError("error: --base-url: \(error)")
                throw ExitCode(1)
            }
            let fragment = PlistGenerator.render(links)
            print(document ? PlistGenerator.wrapInDocument(fragment) : fragment, terminator: "")
            // The config may hold what Apple will not take (a non-storefront country, several links): say so.
            for finding in PlistLinter.lint(links, config: loaded, options: rules.linterOptions) {
                printError("warning: \(finding)")
            }
        }
    }
}

// MARK: - Reading the file

/// Reads an XML or binary plist and takes out the two link keys, keeping wrongly typed values as their
/// kind so the linter can report them. Anything that is not such a plist is an error (exit 1).
private func readLinks(_ path: String) throws -> ExternalPurchaseLinks {
    guard let data = FileManager.default.contents(atPath: path) else {
        printError("error: \(Unreadable.message(path))")
        throw ExitCode(1)
    }
    var format = PropertyListSerialization.PropertyListFormat.xml
    let root: Any
    do {
        root = try PropertyListSerialization.propertyList(from: data, options: [], format: &format)
    } catch {
        printError("error: \(path) is not a property list (XML or binary)")
        throw ExitCode(1)
    }
    // Foundation also reads the old OpenStep text format, in which almost any word is a valid plist.
    guard format == .xml || format == .binary else {
        printError("error: \(path) is not an XML or binary property list")
        throw ExitCode(1)
    }
    guard let top = stringKeyed(root) else {
        printError("error: \(path): the top level must be a dictionary, not \(withArticle(kindName(root)))")
        throw ExitCode(1)
    }
    let single: PlistDictionary<PlistString>? = top[ExternalPurchaseLinks.singleKey].map { value in
        guard let entries = stringKeyed(value) else { return .other(kind: kindName(value)) }
        return .dictionary(entries.mapValues(plistString))
    }
    let multi: PlistDictionary<PlistStringArray>? = top[ExternalPurchaseLinks.multiKey].map { value in
        guard let entries = stringKeyed(value) else { return .other(kind: kindName(value)) }
        return .dictionary(
            entries.mapValues { entry in
                guard let elements = entry as? [Any] else { return .other(kind: kindName(entry)) }
                return .array(elements.map(plistString))
            })
    }
    return ExternalPurchaseLinks(single: single, multi: multi)
}

private func stringKeyed(_ value: Any) -> [String: Any]? {
    guard let dictionary = value as? [AnyHashable: Any] else { return nil }
    var out: [String: Any] = [:]
    for (key, entry) in dictionary {
        // Binary plists can have non-string keys; XML ones cannot. Show them as text rather than drop them.
        out[(key.base as? String) ?? String(describing: key.base)] = entry
    }
    return out
}

private func plistString(_ value: Any) -> PlistString {
    if let text = value as? String { return .string(text) }
    return .other(kind: kindName(value))
}

private func withArticle(_ kind: String) -> String {
    (kind.first.map { "aeiou".contains($0) } ?? false) ? "an \(kind)" : "a \(kind)"
}

/// The plist type name of a value, as the XML element is called (`integer`, `true`/`false` as `boolean`).
private func kindName(_ value: Any) -> String {
    // Check Bool by its dynamic type first: on Linux `1 as NSNumber` also casts to Bool.
    if type(of: value) == Bool.self { return "boolean" }
    switch value {
    case is String: return "string"
    case let number as NSNumber:
        switch String(cString: number.objCType) {
        case "c", "B": return "boolean"
        case "d", "f": return "real"
        default: return "integer"
        }
    case is Date: return "date"
    case is Data: return "data"
    case is [Any]: return "array"
    case is [AnyHashable: Any]: return "dictionary"
    default: return "value of type \(type(of: value))"
    }
}
