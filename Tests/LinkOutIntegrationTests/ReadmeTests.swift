import Foundation
import LinkOutTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The README's commands, run as written against the real binary, so the README cannot drift from the
/// program.
///
/// **What is run.** Every `sh` block of the sections in `sections` (a section runs to the next heading of
/// its level or higher), with bash (`-euo pipefail`), in a folder laid out like a clone
/// (`config/linkout.json`, `Public/`, `.build/release/linkout` pointing at the binary under test, and
/// `linkout` on `PATH` as the installed package has it) while a `linkout serve` of that folder's config runs
/// on port 0. The commands of a section share their shell variables, as in one terminal. A command's expected output is either the `# ` lines right under it, or, for the last command
/// of a block, a plain fenced block right after it; `…` stands for any text. A command must exit 0 unless
/// `exitStatus` says otherwise (`plist lint` exits 1 on findings, which the README shows).
///
/// **What stands for what.** `127.0.0.1:8080` and `127.0.0.1:9464` in a command or its output stand for
/// the real addresses of the listeners. Per section (`Setup`):
/// - `## Try it`: the shipped config, as `make run` serves it.
/// - `## Your own app in five steps`: the shipped config with no server: the section begins by stopping
///   `make run`, since the new app's config listens on the same address with another store, which linkout
///   refuses (`PreflightTests`). `127.0.0.1:8080` and `:9464` stand for ports free when the section starts.
/// - `### Info.plist`: the shipped config, and in the folder the `Info.plist` the section describes
///   (`nl` with a query, `fr` with a trailing slash, `at` right, a `us` link, two `de` links).
/// - `### Experiments`: the shipped config with an experiment on `nl`, after three shoppers' link-outs.
/// - `### Set it up, step by step` and `### Tokens that never pass a link` (reporting): the folder's `config/linkout.json` is the walk-through's
///   `reporting` and `api` sections, with `reporting.productionURL`/`sandboxURL`/`caFile` and the key
///   pointing at the Apple stand-ins (`Support/AppleStandIn.swift`, via `ReportingFixture`) instead of
///   Apple's hosts, and `gatherSeconds` 0 so `report run` sends at once rather than 30 s after the
///   checkout's call. The checkout's API URL `http://10.0.0.5:8081` stands for the test server's API
///   listener, `$LINKOUT_API_KEY` holds a key of its keys file, and a token created an hour ago has been
///   linked out first, as a shopper's tap would have: the newest in `tokens export`, which the call names. The `serve` there does not report (its config has no `reporting`), so what
///   `report run` sends, and `report status` then shows, is the same on every run.
/// - `## Try reporting locally`: the shipped config served, as `make run` serves it (its `server` naming the
///   server's real ports, so that `check-config` finds `make run` there and nothing else), and the clone's
///   `scripts/` (the real one, so `scripts/apple-standin` runs the suite's stand-in). `--port 9443`, and
///   `127.0.0.1:9443` and `:9444` in commands and output, stand for two consecutive free ports; the
///   stand-in the section starts in the background is killed at the end if the section did not stop it.
/// - `### Payment providers: Stripe and Paddle`: the reporting config with `paymentProviders` added, its
///   secrets files (`stripe-webhook-secrets`, `paddle-webhook-secrets`) in the clone's `config/` as the
///   section names them, served with reporting on, after a shopper's link-out of a production token.
///
/// **What is not run** (`consoleOnly`, shown as `console` blocks): commands that run until stopped (`make
/// run`, `serve`, the SSH tunnel), need root and the installed package (`apt install`, `sudoedit`,
/// `systemctl`, `journalctl`; `make test-package` installs it into a debootstrap root in CI), build
/// the whole project (`make test`, `make deb`), or need a host
/// this test has not got (the PostgreSQL block names `db.internal`; `PostgresTests` run those commands
/// against a real server). `everyShellBlockIsRunOrAllowed` fails when a shell-like block appears anywhere
/// else, so a new command cannot be added to the README untested.
@Suite struct ReadmeTests {
    enum Setup {
        case shipped, stopped, infoPlist, experiment, reporting, providers, standIn
    }

    /// The README and the guides it leads to: every shell block in them is run or allowed.
    static let documents = [
        "README.md", "docs/commands.md", "docs/configuration.md", "docs/reporting.md", "docs/notifications.md",
        "docs/payment-providers.md", "docs/storage.md", "docs/postgresql.md", "docs/dashboard.md", "docs/operations.md",
        "docs/architecture.md",
    ]

    /// The sections whose commands are run, as `FILE HEADING`, and what each runs against.
    static let setups: [String: Setup] = [
        "README.md ## Try it": .shipped,
        "README.md ## Your own app in five steps": .stopped,
        "docs/commands.md ## Info.plist": .infoPlist,
        "docs/configuration.md ### Experiments": .experiment,
        "docs/reporting.md ## Set it up, step by step": .reporting,
        "docs/reporting.md ## Tokens that never pass a link": .reporting,
        "docs/reporting.md ## Try reporting locally": .standIn,
        "docs/payment-providers.md # Payment providers: Stripe and Paddle": .providers,
    ]
    static let sections = [
        "README.md ## Try it", "README.md ## Your own app in five steps", "docs/commands.md ## Info.plist",
        "docs/configuration.md ### Experiments", "docs/reporting.md ## Set it up, step by step",
        "docs/reporting.md ## Tokens that never pass a link", "docs/reporting.md ## Try reporting locally",
        "docs/payment-providers.md # Payment providers: Stripe and Paddle",
    ]

    /// `FILE HEADING` taken apart.
    static func place(_ section: String) -> (file: String, heading: String) {
        let space = section.firstIndex(of: " ")!
        return (String(section[..<space]), String(section[section.index(after: space)...]))
    }

    /// The headings of `file` whose commands are run.
    static func runHeadings(of file: String) -> [String] {
        sections.map(place).filter { $0.file == file }.map(\.heading)
    }

    /// Commands that exit with another status than 0, as the README says they do.
    static let exitStatus = ["linkout plist lint Info.plist": Int32(1)]

    /// Commands shown and not run, and why. Each line of a `console` block (or of a shell-like block outside
    /// `sections`) must be here; the why is for the reader of this file.
    static let consoleOnly: [String: String] = [
        "make run     # build (release) and serve the shipped config/linkout.json on 127.0.0.1:8080, store in data/":
            "serves until stopped",
        "make test    # build and run the whole test suite: unit tests, integration tests against the real binary, the dashboard in headless Chromium":
            "the whole suite: CI runs it",
        ".build/release/linkout serve --config config/myapp.json": "serves until stopped",
        "ssh -N -L 9464:127.0.0.1:9464 you@linkout-host     # then open http://127.0.0.1:9464/ here":
            "a remote host, and runs until stopped",
        "linkout store migrate --store postgres://linkout@db.internal:5432/linkout   # once per release, before starting":
            "a PostgreSQL server at db.internal (PostgresTests run store migrate against a real one)",
        "linkout serve --config /etc/linkout/linkout.json                             # on every instance": "serves until stopped",
        "linkout tokens export --store postgres://linkout@db.internal:5432/linkout    # from anywhere":
            "a PostgreSQL server at db.internal (PostgresTests export from a real one)",
        "make deb                                              # .build-package/linkout_0.1.0_amd64.deb, about 18 MB":
            "a release build and dpkg-deb: make deb, and make test-package in CI",
        "sudo apt install ./.build-package/linkout_0.1.0_amd64.deb": "root (make test-package installs it into a debootstrap root)",
        "sudoedit /etc/linkout/linkout.json                    # your app: see \"Your own app in five steps\"": "root, and an editor",
        "sudo install -m 600 -t /etc/linkout reporting-key.p8 api-keys    # the secrets it names, if any (below)":
            "root and the installed package (make test-package puts secrets there and hands them over as the unit does)",
        "sudo systemctl start linkout                          # returns once linkout serves, or fails:":
            "root and systemd (SystemdNotifyTests play systemd's part of Type=notify)",
        "journalctl -u linkout -n 20                           # then this says why, a line per problem": "systemd's journal",
    ]

    struct Command: CustomStringConvertible {
        var text: String
        var expected: String?
        /// The expected output came from `# ` lines, joined without their line breaks.
        var fromComments = false
        var description: String { text }
    }

    /// One fenced block: its language, its lines (without the fence's indentation), the headings it is
    /// under (outermost first), and whether it follows the block before with only blank lines between.
    struct Block {
        var language: String
        var lines: [String]
        var headings: [String]
        var followsBlock: Bool
        var line: Int
    }

    static func blocks(of readme: String) -> [Block] {
        var blocks: [Block] = []
        var headings: [String] = []
        var lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).enumerated()[...]
        var afterBlock = false
        while let (number, line) = lines.popFirst() {
            let fence = line.drop { $0 == " " }
            guard fence.hasPrefix("```") else {
                if let match = line.firstMatch(of: #/^(#+) /#) {
                    let level = match.1.count
                    headings = headings.filter { $0.prefix { $0 == "#" }.count < level } + [line]
                }
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { afterBlock = false }
                continue
            }
            // A block in a list item is indented; its lines lose the fence's indentation.
            let indent = line.count - fence.count
            var block: [String] = []
            while let (_, inner) = lines.popFirst(), !inner.drop(while: { $0 == " " }).hasPrefix("```") {
                block.append(String(inner.dropFirst(min(indent, inner.prefix { $0 == " " }.count))))
            }
            let language = fence.dropFirst(3).trimmingCharacters(in: .whitespaces)
            blocks.append(Block(language: language, lines: block, headings: headings, followsBlock: afterBlock, line: number + 1))
            afterBlock = true
        }
        return blocks
    }

    /// The commands of one section, with what each must print.
    static func commands(in section: String, of readme: String) -> [Command] {
        var commands: [Command] = []
        var lastBlockWasShell = false
        for block in blocks(of: readme) where block.headings.contains(section) {
            defer { lastBlockWasShell = block.language == "sh" }
            if block.language == "sh" {
                commands += shellCommands(block.lines)
            } else if block.language.isEmpty, lastBlockWasShell, block.followsBlock, !commands.isEmpty {
                commands[commands.count - 1].expected = block.lines.joined(separator: "\n")
            }
        }
        return commands
    }

    /// The commands of an `sh` block: `\` continues a line, a heredoc belongs to its command, `# ` lines
    /// under a command are its expected output (one JSON line may be wrapped over several).
    static func shellCommands(_ block: [String]) -> [Command] {
        var commands: [Command] = []
        var current: Command?
        var pending = ""
        var heredoc: String?
        for inner in block {
            if let delimiter = heredoc {
                current?.text += "\n" + inner
                if inner == delimiter { heredoc = nil }
                continue
            }
            // A quoted argument over several lines (`python3 -c '…'`, `curl -d '{…}'`) continues the command.
            if let text = current?.text, pending.isEmpty, Self.endsInsideQuotes(text) {
                current?.text += "\n" + inner
                continue
            }
            if inner.hasPrefix("#") {
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
        return commands
    }

    /// Whether a shell command line leaves a quote open: its next line belongs to it.
    static func endsInsideQuotes(_ text: String) -> Bool {
        var quote: Character?
        var escaped = false
        for character in text {
            if escaped {
                escaped = false
                continue
            }
            switch (quote, character) {
            case (nil, "\\"), ("\"", "\\"): escaped = true
            case (nil, "'"), (nil, "\""): quote = character
            case ("'", "'"), ("\"", "\""): quote = nil
            default: break
            }
        }
        return quote != nil
    }

    /// Whether `actual` is `expected`, `…` standing for any text. Wrapped comment lines were joined without
    /// their line breaks, so JSON is compared without whitespace between its tokens.
    static func matches(_ actual: String, _ expected: String, joined: Bool) -> Bool {
        let squeeze: (String) -> String = { joined ? $0.replacingOccurrences(of: "\n", with: "") : $0 }
        let pattern = "^" + expected.components(separatedBy: "…").map(NSRegularExpression.escapedPattern).joined(separator: "[^\\n]*") + "$"
        return squeeze(actual).range(of: pattern, options: .regularExpression) != nil
    }

    static func text(_ file: String) throws -> String {
        try String(contentsOf: LinkoutBinary.packageRoot.appendingPathComponent(file), encoding: .utf8)
    }

    @Test(arguments: sections)
    func sectionRunsAsWritten(section: String) throws {
        let (file, heading) = Self.place(section)
        let commands = Self.commands(in: heading, of: try Self.text(file))
        // A section that lost its commands, or its figures, would pass without testing anything.
        try #require(commands.count >= 1, "\(section): found \(commands)")
        if Self.setups[section] != .experiment {
            #expect(commands.contains { $0.expected != nil }, "\(section): no expected output found")
        }

        let clone = TemporaryFolder()
        let root = LinkoutBinary.packageRoot.path
        let files = FileManager.default
        try files.createDirectory(atPath: clone.file("config"), withIntermediateDirectories: true)
        try files.createDirectory(atPath: clone.file(".build/release"), withIntermediateDirectories: true)
        try files.createDirectory(atPath: clone.file("bin"), withIntermediateDirectories: true)
        try files.createSymbolicLink(atPath: clone.file("Public"), withDestinationPath: root + "/Public")
        try files.createSymbolicLink(atPath: clone.file(".build/release/linkout"), withDestinationPath: LinkoutBinary.path)
        try files.createSymbolicLink(atPath: clone.file("bin/linkout"), withDestinationPath: LinkoutBinary.path)
        // The shipped config's store, as `make run` makes it.
        try files.createDirectory(atPath: clone.file("data"), withIntermediateDirectories: true)

        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = clone.file("bin") + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        var substitutions: [(String, String)] = []
        var server: GatewayProcess?
        var fixture: ReportingFixture?
        switch Self.setups[section] ?? .shipped {
        case .stopped:
            try files.copyItem(atPath: root + "/config/linkout.json", toPath: clone.file("config/linkout.json"))
        case .shipped, .infoPlist:
            try files.copyItem(atPath: root + "/config/linkout.json", toPath: clone.file("config/linkout.json"))
            if Self.setups[section] == .infoPlist { clone.write("Info.plist", Self.describedInfoPlist) }
            server = try GatewayProcess(config: clone.file("config/linkout.json"), store: clone.file("data/linkout.sqlite"))
        case .experiment:
            let shipped = try Data(contentsOf: URL(fileURLWithPath: root + "/config/linkout.json"))
            var config = try #require(try JSONSerialization.jsonObject(with: shipped) as? [String: Any])
            var links = try #require(config["links"] as? [[String: Any]])
            links[0]["experiment"] = [
                "name": "price-test", "endsAt": "2099-12-31",
                "variants": [
                    ["name": "control", "url": "https://checkout.example.com/nl"],
                    ["name": "annual", "url": "https://checkout.example.com/nl?plan=annual"],
                ],
            ]
            config["links"] = links
            try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: clone.file("config/linkout.json")))
            let serving = try GatewayProcess(config: clone.file("config/linkout.json"), store: clone.file("data/linkout.sqlite"))
            server = serving
            for _ in 0..<3 {
                let response = try serving.get(TokenBuilder.linkOut(token: TokenBuilder.minted()), headers: [Self.browser])
                try #require(response.status == 302)
            }
        case .reporting:
            // With the EU's commission terms, as the monthly statement's example shows them.
            let reporting = try ReportingFixture(
                top: #"""
                    "commission": { "regions": [{ "name": "EU", "countries": ["nl"], "from": "2026-10-01", "rate": 0.15, "reducedRate": 0.10, "windowDays": 7 }] },
                    """#, gather: 0)
            fixture = reporting
            // The config and the files it names by relative path, in the clone's config folder.
            for name in ["linkout.json", "api-keys", "secret"] {
                try files.copyItem(atPath: reporting.folder.file(name), toPath: clone.file("config/" + name))
            }
            let serving = try reporting.serve(reporting: false)
            server = serving
            let token = TokenBuilder.minted(created: TokenBuilder.nowMs - 3_600_000)
            let response = try serving.get(TokenBuilder.linkOut(token: token), headers: [Self.browser])
            try #require(response.status == 302)
            substitutions.append(("http://10.0.0.5:8081", "http://127.0.0.1:\(serving.apiPort)"))
            environment["LINKOUT_API_KEY"] = reporting.apiKey
        case .providers:
            let reporting = try ReportingFixture(gather: 0)
            fixture = reporting
            let serving = try reporting.serveWithProviders()
            server = serving
            for name in ["api-keys", "secret", "stripe-webhook-secrets", "paddle-webhook-secrets"] {
                try files.copyItem(atPath: reporting.folder.file(name), toPath: clone.file("config/" + name))
            }
            try files.copyItem(atPath: reporting.folder.file("providers.json"), toPath: clone.file("config/linkout.json"))
            let token = TokenBuilder.minted(created: TokenBuilder.nowMs - 3_600_000)
            try #require(try serving.get(TokenBuilder.linkOut(token: token), headers: [Self.browser]).status == 302)
        case .standIn:
            try files.copyItem(atPath: root + "/config/linkout.json", toPath: clone.file("config/linkout.json"))
            try files.createSymbolicLink(atPath: clone.file("scripts"), withDestinationPath: root + "/scripts")
            let serving = try GatewayProcess(config: clone.file("config/linkout.json"), store: clone.file("data/linkout.sqlite"))
            server = serving
            // The config names the addresses the server really listens on, as `make run`'s does: the section's
            // `check-config` then finds this server (same store, a note), not whatever else holds :8080.
            let shipped = try Data(contentsOf: URL(fileURLWithPath: clone.file("config/linkout.json")))
            var config = try #require(try JSONSerialization.jsonObject(with: shipped) as? [String: Any])
            var listeners = try #require(config["server"] as? [String: Any])
            listeners["listen"] = "127.0.0.1:\(serving.port)"
            listeners["adminListen"] = "127.0.0.1:\(serving.adminPort)"
            config["server"] = listeners
            try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: clone.file("config/linkout.json")))
            let sandbox = try Self.freePortPair()
            substitutions += [
                ("--port 9443", "--port \(sandbox)"), ("127.0.0.1:9443", "127.0.0.1:\(sandbox)"),
                ("127.0.0.1:9444", "127.0.0.1:\(sandbox + 1)"),
            ]
        }
        defer { _ = server?.stop() }
        defer {
            // A stand-in the section started and did not stop (a command failed before `kill`).
            if let text = try? String(contentsOfFile: clone.file("data/apple-standin/pid"), encoding: .utf8),
                let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                // Still the stand-in, not a process that got its id after the section's `kill`.
                let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8),
                command.contains(clone.file("data/apple-standin"))
            {
                kill(pid, SIGKILL)
            }
        }
        _ = fixture
        let ports = try server.map { ($0.port, $0.adminPort) } ?? (PreflightTests.freePort(), PreflightTests.freePort())
        substitutions += [("127.0.0.1:8080", "127.0.0.1:\(ports.0)"), ("127.0.0.1:9464", "127.0.0.1:\(ports.1)")]

        // The section's commands share their shell variables, as typed into one terminal (`ID=$(…)` in one,
        // `"$ID"` in the next): each runs with the variables the ones before left, exported, and leaves its own.
        let variables = clone.file(".readme-variables")
        for command in commands {
            let text = substitutions.reduce(command.text) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
            let script = "set -a; if [ -f '\(variables)' ]; then . '\(variables)'; fi\n\(text)\nexport -p > '\(variables)'"
            let result = try LinkOutTestSupport.Command.run(
                "/bin/bash", ["-euo", "pipefail", "-c", script], directory: URL(fileURLWithPath: clone.path), environment: environment)
            let stdout = result.stdoutText
            let status = Self.exitStatus[command.text] ?? 0
            #expect(result.status == status, "\(section): `\(command.text)` exited \(result.status): \(result.stderr)\(stdout)")
            guard let expected = command.expected else { continue }
            let actual = substitutions.reduce(
                stdout.replacingOccurrences(of: "\r", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
            ) {
                $0.replacingOccurrences(of: $1.1, with: $1.0)
            }
            #expect(
                Self.matches(actual, expected.trimmingCharacters(in: .whitespacesAndNewlines), joined: command.fromComments),
                "\(section): `\(command.text)` printed\n\(actual)\nbut the README says\n\(expected)")
        }
    }

    /// A free port on 127.0.0.1 whose next port is free too: the stand-in's sandbox and production.
    static func freePortPair() throws -> Int {
        for _ in 0..<50 {
            let port = try PreflightTests.freePort()
            if port < 65535, isFree(port + 1) { return port }
        }
        throw StartError(description: "no two consecutive free ports on 127.0.0.1")
    }

    struct StartError: Error, CustomStringConvertible { var description: String }

    static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    static let browser =
        "User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1"

    /// The app plist `### Info.plist` describes: `nl` with a query, `fr` with a trailing slash, `at` as it
    /// should be, a `us` link, and two `de` links under the multi-link key.
    static let describedInfoPlist = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
          <key>SKExternalPurchaseLink</key>
          <dict>
            <key>at</key><string>https://pay.example.com/at</string>
            <key>fr</key><string>https://pay.example.com/fr/</string>
            <key>nl</key><string>https://pay.example.com/nl?src=app</string>
            <key>us</key><string>https://pay.example.com/us</string>
          </dict>
          <key>SKExternalPurchaseMultiLink</key>
          <dict>
            <key>de</key>
            <array><string>https://pay.example.com/de</string><string>https://pay.example.com/de/annual</string></array>
          </dict>
        </dict>
        </plist>
        """

    /// No shell-like block outside the run sections unless every command of it is allowed as console-only,
    /// and no `console` block inside them either: a command added to the README is run, or listed above with
    /// a reason.
    @Test func everyShellBlockIsRunOrAllowed() throws {
        #expect(Set(Self.setups.keys) == Set(Self.sections), "every run section needs a setup, and only those")
        var shown: Set<String> = []
        for file in Self.documents {
            let text = try Self.text(file)
            let unlisted = Self.unlistedCommands(in: text, running: Self.runHeadings(of: file), file: file)
            #expect(
                unlisted.isEmpty, "commands neither run by ReadmeTests nor in ReadmeTests.consoleOnly:\n\(unlisted.joined(separator: "\n"))"
            )
            shown.formUnion(Self.blocks(of: text).filter { Self.shellLike.contains($0.language) }.flatMap(\.lines))
        }
        // Every allowed command is still in a document: the list cannot rot into an allowance for anything.
        for command in Self.consoleOnly.keys {
            #expect(shown.contains(command), "consoleOnly lists `\(command)`, no longer in the README or a guide")
        }
        // Every guide the README leads to is a document checked here, and the other way.
        let readme = try Self.text("README.md")
        for file in Self.documents.dropFirst() { #expect(readme.contains("](\(file))"), "the README's guides table names \(file)") }
    }

    static let shellLike: Set<String> = ["sh", "bash", "console", "shell", "shell-session", "zsh"]

    /// `FILE:LINE: command` for each command that is neither run nor allowed; `running`: the headings of
    /// the file whose blocks are run.
    static func unlistedCommands(in readme: String, running: [String] = ["## Try it"], file: String = "README.md") -> [String] {
        var unlisted: [String] = []
        for block in blocks(of: readme) {
            let run = block.language == "sh" && block.headings.contains { running.contains($0) }
            if run { continue }
            // A plain block that starts with a prompt is a command too.
            let prompted = block.language.isEmpty && block.lines.first?.hasPrefix("$ ") == true
            guard Self.shellLike.contains(block.language) || prompted else { continue }
            let lines = prompted ? block.lines.filter { $0.hasPrefix("$ ") } : block.lines
            for line in lines where !line.trimmingCharacters(in: .whitespaces).isEmpty && !line.hasPrefix("#") {
                if consoleOnly[line] == nil { unlisted.append("\(file):\(block.line): \(line)") }
            }
        }
        return unlisted
    }

    /// The commands guide's table gives each command's synopsis, placeholders and all, so it cannot be run as
    /// written: instead each command must exist, take every option its synopsis names, and name every option
    /// it takes (its `--help`).
    @Test func theCommandsTableMatchesTheBinary() throws {
        let readme = try Self.text("docs/commands.md")
        let start = try #require(readme.range(of: "# Commands\n"))
        let table = readme[start.upperBound...].split(separator: "\n").prefix { !$0.hasPrefix("#") }
        var rows = 0
        for row in table where row.hasPrefix("| `linkout ") {
            let synopsis = row.dropFirst(3).prefix { $0 != "`" }
            let words = synopsis.split(separator: " ").dropFirst().prefix { $0.wholeMatch(of: /[a-z][a-z-]*/) != nil }.map(String.init)
            let options = Set(synopsis.matches(of: /--[a-z][a-z-]*/).map { String($0.output) })
            let help = try LinkoutBinary.run(words + ["--help"])
            #expect(help.status == 0, "`linkout \(words.joined(separator: " ")) --help` exited \(help.status): \(help.stderr)")
            for option in options.sorted() where option != "--help" {
                #expect(
                    help.stdout.contains(option),
                    "README's `\(synopsis)`: \(option) is not in `linkout \(words.joined(separator: " ")) --help`")
            }
            // And the other way: an option the command takes is in its synopsis.
            let taken = Set(help.stdout.matches(of: /--[a-z][a-z-]*/).map { String($0.output) }).subtracting(["--help", "--version"])
            for option in taken.subtracting(options).sorted() {
                Issue.record("`linkout \(words.joined(separator: " "))` takes \(option), which README's `\(synopsis)` does not name")
            }
            rows += 1
        }
        #expect(rows >= 10, "found \(rows) commands in the table")
    }

    /// The guard itself: an unlisted command outside the sections, in any shell-like language, is found.
    @Test func anUnlistedCommandIsFound() {
        let readme = """
            ## Try it

            ```sh
            echo run
            ```

            ```console
            echo console in a run section
            ```

            ## Elsewhere

            ```sh
            echo sh elsewhere
            ```

            ```bash
            echo bash
            ```

            ```
            $ echo prompt
            output
            ```

            ```console
            sudo apt install ./.build-package/linkout_0.1.0_amd64.deb
            ```

            ```json
            {"not": "a command"}
            ```
            """
        #expect(
            Self.unlistedCommands(in: readme).map { $0.split(separator: " ", maxSplits: 1)[1] } == [
                "echo console in a run section", "echo sh elsewhere", "echo bash", "$ echo prompt",
            ])
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

            ### A subsection, still in it

            ```sh
            echo sub
            ```

            ## Next

            ```sh
            echo not in it
            ```
            """
        let commands = Self.commands(in: "## Try it", of: "\n" + readme)
        #expect(
            commands.map(\.text) == [
                "curl -i 'http://127.0.0.1:8080/nl'", "linkout tokens export", "echo done", "cat > a.json <<'EOF'\n{\n  \"x\": 1\n}\nEOF",
                "echo sub",
            ])
        #expect(commands.map(\.expected) == ["HTTP/1.1 302 Found\nLocation: …", #"{"hits":1,"otherVisits":0}"#, nil, nil, nil])
        #expect(Self.commands(in: "### A subsection, still in it", of: readme).map(\.text) == ["echo sub"])
        #expect(
            Self.shellCommands(["python3 -c 'import sys", "# not a comment", "print(1)'", "# 1", "echo \"it's\""]).map(\.text)
                == ["python3 -c 'import sys\n# not a comment\nprint(1)'", "echo \"it's\""])
        #expect(Self.matches("HTTP/1.1 302 Found\nLocation: https://x/", "HTTP/1.1 302 Found\nLocation: …", joined: false))
        #expect(
            !Self.matches(
                "HTTP/1.1 302 Found\nCache-Control: no-store\nLocation: https://x/", "HTTP/1.1 302 Found\nLocation: …", joined: false))
        #expect(!Self.matches("HTTP/1.1 302 Found\nLocation: https://x/\nSet-Cookie: a", "HTTP/1.1 302 Found\nLocation: …", joined: false))
        #expect(Self.matches(#"{"hits":1,"otherVisits":0}"#, #"{"hits":1,"otherVisits":0}"#, joined: true))
        #expect(!Self.matches(#"{"hits":0,"otherVisits":1}"#, #"{"hits":1,"otherVisits":0}"#, joined: true))
    }
}
