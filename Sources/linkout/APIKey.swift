import ArgumentParser
import LinkOutCore

struct APIKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-key",
        abstract: "Make keys for the checkout's API listener.",
        subcommands: [New.self])

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new random key (give it to the checkout) and the line for api.keysFile (which keeps only its SHA-256).")

        @Argument(help: "A name for the key, logged with each request made with it (such as checkout or backfill).")
        var name: String

        func validate() throws {
            guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }) else {
                throw ValidationError("the name must be 1 to 64 printable characters without spaces or #")
            }
        }

        func run() {
            let made = APIKeys.newKey(name: name)
            print("key (give it to the checkout, once; it is not kept):\n  \(made.key)")
            print("line for api.keysFile:\n  \(made.line)")
        }
    }
}
