import ArgumentParser
import Foundation
import Glibc
import LinkOutCore
import LinkOutServer

struct APIKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-key",
        abstract: "Make keys for the checkout's API listener.",
        subcommands: [New.self])

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print a new random key (give it to the checkout) and the line for api.keysFile (which keeps only its SHA-256), or with --keys-file append the line there and print only the key."
        )

        @Argument(help: "A name for the key, logged with each request made with it (such as checkout or backfill).")
        var name: String

        @Option(
            help: ArgumentHelp(
                "Append the line to this keys file (made, readable by its owner only, if missing) and print only the key, for a script to capture.",
                valueName: "path"))
        var keysFile: String?

        func validate() throws {
            guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "#") }) else {
                throw ValidationError("the name must be 1 to 64 printable characters without spaces or #")
            }
        }

        func run() throws {
            let made = APIKeys.newKey(name: name)
            guard let keysFile else {
                print("key (give it to the checkout, once; it is not kept):\n  \(made.key)")
                print("line for api.keysFile:\n  \(made.line)")
                return
            }
            if let problem = Self.append(made.line, named: name, to: keysFile) {
                printError("error: \(problem)")
                throw ExitCode(1)
            }
            printError(
                "added the line for key \(name) to \(keysFile); linkout reads it at its next start or reload (systemctl reload linkout)")
            print(made.key)
        }

        /// Appends `line` to the keys file, refusing a name it already has (the file would then be refused as
        /// a whole) and a file with other problems, which the operator should see before adding to it. Nil
        /// when appended, else what stopped it.
        static func append(_ line: String, named name: String, to path: String) -> String? {
            var existing = ""
            if FileManager.default.fileExists(atPath: path) {
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    return Unreadable.message(path)
                }
                existing = text
                let (entries, problems) = APIKeys.read(text)
                if !problems.isEmpty {
                    return "\(path) has problems; fix them before adding a key:\n" + problems.map { "  \($0)" }.joined(separator: "\n")
                }
                if entries.contains(where: { $0.name == name }) {
                    return "\(path) already has a key named \(name): pick another name, or remove its line first"
                }
            }
            let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return "cannot write \(path): \(String(cString: strerror(errno)))" }
            defer { close(fd) }
            let text = (existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n") + line + "\n"
            let bytes = Array(text.utf8)
            guard write(fd, bytes, bytes.count) == bytes.count else {
                return "cannot write \(path): \(String(cString: strerror(errno)))"
            }
            return nil
        }
    }
}
