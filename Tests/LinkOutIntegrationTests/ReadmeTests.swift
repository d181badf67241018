import Foundation
import Testing

/// The README's walk-throughs, run as written against the real binary, so the README cannot drift from
/// the program: every command of the sections below is run with bash in a folder laid out like a clone
/// (`config/linkout.json`, `Public/`, `.build/release/linkout` pointing at the binary under test) while a
/// `linkout serve` of that config runs on port 0 (`127.0.0.1:8080` in a command or its output stands for
/// its real address). A command's expected output is either the `# ` lines right under it, or, for the
/// last command of a block, a plain fenced block right after it; `…` stands for any text. A command
/// without expected output must exit 0. Only `sh` blocks are run: a `console` block shows a command that
/// runs until stopped or needs root (`serve`, `systemctl`, `apt install`).
@Suite struct ReadmeTests {
    /// The sections whose commands are run.
    static let sections = ["## Try it", "## Your own app in five steps"]

    struct Command: CustomStringConvertible {
        var text: String
        var expected: String?
        /// The expected output came from `# ` lines, joined without their line breaks.
        var fromComments = false
        var description: String { text }
    }

    /// The commands of one section, with what each must print.
    static func commands(in section: String, of readme: String) -> [Command] {
        guard let start = readme.range(of: "\n" + section + "\n") else { return [] }
        let rest = readme[start.upperBound...]
        let body = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
        var commands: [Command] = []
        var lines = body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)[...]
        var lastBlockWasShell = false
        while let line = lines.popFirst() {
            let fence = line.drop { $0 == " " }
            guard fence.hasPrefix("```") else {
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { lastBlockWasShell = false }
                continue
            }
            // A block in a list item is indented; its lines lose the fence's indentation.
            let indent = line.count - fence.count
            let language = fence.dropFirst(3).trimmingCharacters(in: .whitespaces)
            var block: [String] = []
            while let inner = lines.popFirst(), !inner.drop(while: { $0 == " " }).hasPrefix("```") {
                block.append(String(inner.dropFirst(min(indent, inner.prefix { $0 == " " }.count))))
            }
            if language == "sh" {
                var current: Command?
                var pending = ""
                var heredoc: String?
                for inner in block {
                    if let delimiter = heredoc {
                        current?.text += "\n" + inner
                        if inner == delimiter { heredoc = nil }
                        continue
                    }
                    if inner.hasPrefix("#") {
                        // Expected output, one JSON line wrapped over several comment lines.
                        let text = inner.dropFirst().trimmingCharacters(in: .whitespaces)
                        if var command = current {
                            command.expected = (command.expected ?? "") + text
                            command.fromComments = true
                            current = command
                        }
                        continue
                    }
                    if inner.trimmingCharacters(in: .whitespaces).isEmpty { continue }
                    if inner.hasSuffix("\\") {
                        pending += inner.dropLast() + " "
                        continue
                    }
                    if let current { commands.append(current) }
                    current = Command(text: pending + inner)
                    pending = ""
                    if let match = inner.firstMatch(of: /<<-?'?([A-Za-z_]+)'?/) { heredoc = String(match.1) }
                }
                if let current { commands.append(current) }
                lastBlockWasShell = true
            } else if language.isEmpty, lastBlockWasShell, !commands.isEmpty {
                commands[commands.count - 1].expected = block.joined(separator: "\n")
                lastBlockWasShell = false
            } else {
                lastBlockWasShell = false
            }
        }
        return commands
    }

    /// Whether `actual` is `expected`, `…` standing for any text. Wrapped comment lines were joined without
    /// their line breaks, so JSON is compared without whitespace between its tokens.
    static func matches(_ actual: String, _ expected: String, joined: Bool) -> Bool {
        let squeeze: (String) -> String = { joined ? $0.replacingOccurrences(of: "\n", with: "") : $0 }
        let pattern = "^" + expected.components(separatedBy: "…").map(NSRegularExpression.escapedPattern).joined(separator: "[^\\n]*") + "$"
        return squeeze(actual).range(of: pattern, options: .regularExpression) != nil
    }

    @Test(arguments: sections)
    func sectionRunsAsWritten(section: String) throws {
        let readme = try String(contentsOf: LinkoutBinary.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let commands = Self.commands(in: section, of: readme)
        // A section that lost its commands, or its figures, would pass without testing anything.
        try #require(commands.count >= 3, "\(section): found \(commands)")
        #expect(commands.contains { $0.expected != nil }, "\(section): no expected output found")

        let clone = TemporaryFolder()
        let root = LinkoutBinary.packageRoot.path
        let files = FileManager.default
        try files.createDirectory(atPath: clone.file("config"), withIntermediateDirectories: true)
        try files.createDirectory(atPath: clone.file(".build/release"), withIntermediateDirectories: true)
        try files.copyItem(atPath: root + "/config/linkout.json", toPath: clone.file("config/linkout.json"))
        try files.createSymbolicLink(atPath: clone.file("Public"), withDestinationPath: root + "/Public")
        try files.createSymbolicLink(atPath: clone.file(".build/release/linkout"), withDestinationPath: LinkoutBinary.path)
        // The shipped config's store, as `make run` makes it.
        try files.createDirectory(atPath: clone.file("data"), withIntermediateDirectories: true)
        let server = try LinkoutServer(config: clone.file("config/linkout.json"), store: clone.file("data/linkout.sqlite"))
        defer { _ = server.stop() }
        let address = "127.0.0.1:\(server.port)"
        let admin = "127.0.0.1:\(server.adminPort)"

        for command in commands {
            let text = command.text.replacingOccurrences(of: "127.0.0.1:8080", with: address)
                .replacingOccurrences(of: "127.0.0.1:9464", with: admin)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-euo", "pipefail", "-c", text]
            process.currentDirectoryURL = URL(fileURLWithPath: clone.path)
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(section): `\(command.text)` exited \(process.terminationStatus): \(stderr)")
            guard let expected = command.expected else { continue }
            let actual = stdout.replacingOccurrences(of: "\r", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
                .replacingOccurrences(of: address, with: "127.0.0.1:8080")
            #expect(
                Self.matches(actual, expected.trimmingCharacters(in: .whitespacesAndNewlines), joined: command.fromComments),
                "\(section): `\(command.text)` printed\n\(actual)\nbut the README says\n\(expected)")
        }
    }

    /// The extraction itself: a drifted figure must fail, or the test above proves nothing.
    @Test func aChangedFigureDoesNotMatch() {
        let readme = """
            ## Try it

            ```sh
            curl -i 'http://127.0.0.1:8080/nl'
            ```

            ```
            HTTP/1.1 302 Found
            Location: …
            ```

            ```sh
            linkout tokens export
            # {"hits":1,
            #  "otherVisits":0}
            echo done
            ```

            1. A step:

               ```sh
               cat > a.json <<'EOF'
               {
                 "x": 1
               }
               EOF
               ```

            ## Next
            """
        let commands = Self.commands(in: "## Try it", of: "\n" + readme)
        #expect(commands.map(\.text) == [
            "curl -i 'http://127.0.0.1:8080/nl'", "linkout tokens export", "echo done", "cat > a.json <<'EOF'\n{\n  \"x\": 1\n}\nEOF",
        ])
        #expect(commands.map(\.expected) == ["HTTP/1.1 302 Found\nLocation: …", #"{"hits":1,"otherVisits":0}"#, nil, nil])
        #expect(Self.matches("HTTP/1.1 302 Found\nLocation: https://x/", "HTTP/1.1 302 Found\nLocation: …", joined: false))
        #expect(!Self.matches("HTTP/1.1 302 Found\nCache-Control: no-store\nLocation: https://x/", "HTTP/1.1 302 Found\nLocation: …", joined: false))
        #expect(!Self.matches("HTTP/1.1 302 Found\nLocation: https://x/\nSet-Cookie: a", "HTTP/1.1 302 Found\nLocation: …", joined: false))
        #expect(Self.matches(#"{"hits":1,"otherVisits":0}"#, #"{"hits":1,"otherVisits":0}"#, joined: true))
        #expect(!Self.matches(#"{"hits":0,"otherVisits":1}"#, #"{"hits":1,"otherVisits":0}"#, joined: true))
    }
}
