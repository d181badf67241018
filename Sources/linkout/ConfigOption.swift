import ArgumentParser
import Foundation
import LinkOutCore
import LinkOutServer

/// `--config PATH`, shared by every command that reads the config.
struct ConfigOption: ParsableArguments {
    static let defaultPath = "config/linkout.json"
    /// Where the package (`make deb`, `make install`) puts the config.
    static let installedPath = "/etc/linkout/linkout.json"

    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "The config file (default: config/linkout.json in the current folder, as in a clone; else /etc/linkout/linkout.json, as the package installs it).",
            valueName: "path"))
    var given: String?

    /// The config file: the one given, else a clone's, else the package's. An operator on a server runs
    /// `linkout report status` from anywhere, and a developer runs it in the clone; neither should have to
    /// pass the obvious path, and the first that exists is the one they mean.
    var config: String {
        if let given { return given }
        if FileManager.default.fileExists(atPath: Self.defaultPath) { return Self.defaultPath }
        if FileManager.default.fileExists(atPath: Self.installedPath) { return Self.installedPath }
        return Self.defaultPath
    }

    /// Reads and validates the config; on failure prints every problem and exits 1.
    /// - Parameter forServing: also read the signing secret and check the files serving needs
    ///   (`healthChecks.caFile`). Only `serve` and `check-config` ask: an export or a plist command must
    ///   work for an operator who may not read a secret that only the service can.
    func load(forServing: Bool = false) throws -> GatewayConfig {
        do {
            return try read(forServing: forServing)
        } catch {
            for line in error.lines { printError("error: \(line)") }
            throw ExitCode(1)
        }
    }

    /// Reads and validates the config, with every problem in the error.
    func read(forServing: Bool = false) throws(ConfigFileError) -> GatewayConfig {
        let (loaded, problems) = readCollecting(forServing: forServing)
        guard let loaded, problems.isEmpty else { throw ConfigFileError(lines: problems) }
        return loaded
    }

    /// The config, and every problem found: the config's own rules (nil config when any is broken) and,
    /// `forServing`, every file serving reads (the signing secret, the In-App Purchase key, the CA files),
    /// each checked whatever the others' fate, so one fix does not reveal the next.
    func readCollecting(forServing: Bool) -> (GatewayConfig?, [String]) {
        guard let data = FileManager.default.contents(atPath: config) else {
            let hint = given == nil ? "; nor \(Self.installedPath): run from the linkout folder, or pass --config PATH" : ""
            return (nil, ["cannot read config \(config) (\(Unreadable.why(config))\(hint))"])
        }
        let folder = (config as NSString).deletingLastPathComponent
        switch ConfigLoader.load(json: [UInt8](data), baseDirectory: folder) {
        case .failure(let error):
            return (nil, error.problems.map { "\(config): \($0)" })
        case .success(var loaded):
            guard forServing else { return (loaded, []) }
            var problems: [String] = []
            if var signing = loaded.signing {
                do {
                    signing.secret = try Self.readSecret(signing.secretFile, config: config)
                    loaded.signing = signing
                } catch { problems += error.lines }
            }
            // The In-App Purchase key: checked here so check-config and serve refuse a config whose key
            // cannot be used, and kept for serve's reporter.
            if var reporting = loaded.reporting {
                do {
                    reporting.privateKeyPEM = try Self.readReportingKey(reporting, config: config)
                    loaded.reporting = reporting
                } catch { problems += error.lines }
                if let caFile = reporting.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
                    problems.append("\(config): reporting.caFile: \(Unreadable.message(caFile))")
                }
            }
            // The payment providers' signing secrets, from their files (systemd credentials).
            for (index, var provider) in loaded.paymentProviders.providers.enumerated() {
                guard let file = provider.secretsFile else { continue }
                let key = "paymentProviders.\(provider.provider.rawValue).signingSecretsFile"
                guard let data = FileManager.default.contents(atPath: file) else {
                    problems.append("\(config): \(key): \(Unreadable.message(file))")
                    continue
                }
                if let nothing = Preflight.nothingIn(file, data) {
                    problems.append("\(config): \(key): \(nothing)")
                    continue
                }
                let secrets = PaymentProviderSettings.secrets(fromFile: String(decoding: data, as: UTF8.self))
                if let problem = provider.secretsProblem(secrets) {
                    problems.append("\(config): \(key): \(file) \(problem)")
                    continue
                }
                provider.secrets = secrets
                loaded.paymentProviders.providers[index] = provider
            }
            // A CA file curl cannot read fails every check, which would mark every destination down.
            if let caFile = loaded.healthChecks.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
                problems.append("\(config): healthChecks.caFile: \(Unreadable.message(caFile))")
            }
            return (loaded, problems)
        }
    }

    /// Serving's whole check, for `serve` and `check-config` alike: the config's rules, the files it names,
    /// then (the command line's overrides applied) the pre-flight of this machine. Every problem is printed
    /// (`error: …`), whatever kind, before exiting 1.
    ///
    /// - Parameter overridden: the config keys the command line set, with the option that set them: a
    ///   problem with one of those is the option's (`--listen: cannot listen on …`), not the file's.
    func loadForServing(
        applying overrides: (inout GatewayConfig) -> Void = { _ in },
        overridden: [(key: String, option: String)] = [],
        preflight: (GatewayConfig) -> Result<Preflight.Ready, PreflightError>
    ) throws -> (GatewayConfig, Preflight.Ready) {
        var (loaded, problems) = readCollecting(forServing: true)
        var ready: Preflight.Ready?
        if var config = loaded {
            overrides(&config)
            loaded = config
            switch preflight(config) {
            case .success(let checked): ready = checked
            case .failure(let error):
                problems += error.problems.map { problem in
                    if let (key, option) = overridden.first(where: { problem.hasPrefix($0.key + ": ") }) {
                        return option + problem.dropFirst(key.count)
                    }
                    return "\(self.config): \(problem)"
                }
            }
        }
        guard let loaded, let ready, problems.isEmpty else {
            for line in problems { printError("error: \(line)") }
            throw ExitCode(1)
        }
        return (loaded, ready)
    }

    /// The config with its In-App Purchase key read, for `report run` (`serve` reads it with the rest of
    /// what it serves with, `loadForServing`). Exits 1 with the reason when it cannot be used.
    func withReportingKey(_ loaded: GatewayConfig) throws -> GatewayConfig {
        guard var reporting = loaded.reporting else { return loaded }
        do {
            reporting.privateKeyPEM = try Self.readReportingKey(reporting, config: config)
        } catch {
            for line in error.lines { printError("error: \(line)") }
            throw ExitCode(1)
        }
        if let caFile = reporting.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            printError("error: \(config): reporting.caFile: \(Unreadable.message(caFile))")
            throw ExitCode(1)
        }
        var updated = loaded
        updated.reporting = reporting
        return updated
    }

    /// The `.p8` file's text, once it is known to hold a P-256 key. Never printed.
    private static func readReportingKey(_ reporting: ReportingSettings, config: String) throws(ConfigFileError) -> String {
        guard let data = FileManager.default.contents(atPath: reporting.keyFile) else {
            throw ConfigFileError(lines: ["\(config): reporting.keyFile: \(Unreadable.message(reporting.keyFile))"])
        }
        if let nothing = Preflight.nothingIn(reporting.keyFile, data) {
            throw ConfigFileError(lines: ["\(config): reporting.keyFile: \(nothing)"])
        }
        let pem = String(decoding: data, as: UTF8.self)
        do {
            _ = try AppStoreJWT(privateKeyPEM: pem, keyId: reporting.keyId, issuerId: reporting.issuerId)
        } catch {
            throw ConfigFileError(lines: ["\(config): reporting.keyFile: \(reporting.keyFile) is \(error.message)"])
        }
        return pem
    }

    /// The signing secret: the file's bytes without trailing newlines (editors and `echo` add one).
    private static func readSecret(_ path: String, config: String) throws(ConfigFileError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigFileError(lines: ["\(config): signing.secretFile: \(Unreadable.message(path))"])
        }
        if let nothing = Preflight.nothingIn(path, data) {
            throw ConfigFileError(lines: ["\(config): signing.secretFile: \(nothing)"])
        }
        var secret = [UInt8](data)
        while let last = secret.last, last == 0x0A || last == 0x0D { secret.removeLast() }
        guard secret.count >= SignedReference.minimumSecretBytes else {
            throw ConfigFileError(lines: [
                "\(config): signing.secretFile: \(path) holds \(secret.count) bytes; a secret needs at least \(SignedReference.minimumSecretBytes) (try: openssl rand -hex 32 > \(path))"
            ])
        }
        return secret
    }
}

/// A config that cannot be used: one line per problem.
struct ConfigFileError: Error, CustomStringConvertible {
    var lines: [String]
    var description: String { lines.joined(separator: "; ") }
}

/// `--store`, shared by every command that opens the store, with one help text that says both kinds.
struct StoreOption: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store, overriding the config's store: a SQLite file path, or a postgres:// URL.", valueName: "path|url"))
    var store: String?

    /// `--store`, else the config's `store`, else `data/linkout.sqlite` in the current folder.
    func location(_ config: GatewayConfig) -> String {
        storePath(option: store, config: config)
    }
}

/// The store: `option`, else the config's `store`, else `data/linkout.sqlite`.
func storePath(option: String?, config: GatewayConfig) -> String {
    option ?? config.store
}

/// A JSON-lines input of the import commands: the file's text, or standard input's for `-`; exits 1 with
/// the reason when it cannot be read.
func readInput(_ file: String) throws -> String {
    if file == "-" { return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) }
    guard let data = FileManager.default.contents(atPath: file) else {
        printError("error: \(Unreadable.message(file))")
        throw ExitCode(1)
    }
    return String(decoding: data, as: UTF8.self)
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
