/// Reads the JSON config into a `GatewayConfig`, reporting every problem with its key and the rule broken.
/// The file is JSON with `//` line comments allowed, so a config can explain itself.
///
/// Relative paths in the file (`store`, `publicDir`) are taken from the config file's folder, so a config
/// means the same thing whatever folder the gateway is started from.
public enum ConfigLoader {
    public static func load(json: [UInt8], baseDirectory: String) -> Result<GatewayConfig, ConfigError> {
        let document: JSONValue
        do {
            document = try JSONValue.parse(json, allowingComments: true)
        } catch {
            return .failure(ConfigError(problems: [ConfigProblem(key: "", rule: "\(error)")]))
        }
        var problems: [ConfigProblem] = []
        let config = read(document, baseDirectory: baseDirectory, problems: &problems)
        if let config, problems.isEmpty { return .success(config) }
        return .failure(ConfigError(problems: problems))
    }

    private static func read(_ document: JSONValue, baseDirectory: String, problems: inout [ConfigProblem]) -> GatewayConfig? {
        guard var root = ObjectReader(document, key: "", problems: &problems) else { return nil }

        var server = ServerSettings()
        if var object = root.object("server", problems: &problems) {
            if let text = object.string("listen", problems: &problems) {
                if let address = ListenAddress.parse(text) {
                    server.listen = address
                } else {
                    problems.append(object.problem("listen", "must be HOST:PORT, such as 127.0.0.1:8080 or [::1]:8080"))
                }
            }
            if let text = object.string("adminListen", problems: &problems) {
                if text == "off" {
                    server.adminListen = nil
                } else if let address = ListenAddress.parse(text) {
                    server.adminListen = address
                } else {
                    problems.append(object.problem("adminListen", "must be HOST:PORT, such as 127.0.0.1:9464, or \"off\""))
                }
            }
            if let file = object.string("adminKeysFile", problems: &problems) {
                if file.isEmpty { problems.append(object.problem("adminKeysFile", "must be a file path")) }
                else { server.adminKeysFile = resolve(file, against: baseDirectory) }
            }
            if let threads = object.integer("threads", problems: &problems) {
                if (0...256).contains(threads) { server.threads = Int(threads) }
                else { problems.append(object.problem("threads", "must be from 0 (one per core) to 256")) }
            }
            if let grace = object.number("drainGraceSeconds", problems: &problems) {
                if (0...3600).contains(grace) { server.drainGraceSeconds = grace }
                else { problems.append(object.problem("drainGraceSeconds", "must be from 0 to 3600")) }
            }
            if let pending = object.integer("maxPendingRecords", problems: &problems) {
                if (1...10_000_000).contains(pending) { server.maxPendingRecords = Int(pending) }
                else { problems.append(object.problem("maxPendingRecords", "must be from 1 to 10000000")) }
            }
            if let head = object.integer("requestHeadTimeoutSeconds", problems: &problems) {
                if (0...3600).contains(head) { server.requestHeadTimeoutSeconds = Int(head) }
                else { problems.append(object.problem("requestHeadTimeoutSeconds", "must be from 0 (off) to 3600")) }
            }
            if let idle = object.integer("idleTimeoutSeconds", problems: &problems) {
                if (1...3600).contains(idle) { server.idleTimeoutSeconds = Int(idle) }
                else { problems.append(object.problem("idleTimeoutSeconds", "must be from 1 to 3600")) }
            }
            object.reportUnknownKeys(problems: &problems)
        }

        if var object = root.object("durability", problems: &problems) {
            let mode = object.string("mode", problems: &problems) ?? "strict"
            let window = object.integer("commitWindowMs", problems: &problems) ?? 50
            if !(1...1000).contains(window) {
                problems.append(object.problem("commitWindowMs", "must be from 1 to 1000"))
            }
            switch mode {
            case "strict": server.durability = .strict
            case "relaxed": server.durability = .relaxed(commitWindowMs: Int(window))
            default: problems.append(object.problem("mode", "must be 'strict' (302 after commit) or 'relaxed' (302 before commit)"))
            }
            object.reportUnknownKeys(problems: &problems)
        }

        var storePath: String?
        if let path = root.string("store", problems: &problems) {
            if path.isEmpty { problems.append(root.problem("store", "must be a file path")) }
            // A PostgreSQL URL is not a path: it is kept as written.
            else { storePath = StoreLocation.isPostgresURL(path) ? path : resolve(path, against: baseDirectory) }
        }
        var storeOutage = StoreOutageSettings()
        if var object = root.object("storeOutage", problems: &problems) {
            if let text = object.string("mode", problems: &problems) {
                if let mode = StoreOutageSettings.Mode(rawValue: text) { storeOutage.mode = mode }
                else { problems.append(object.problem("mode", "must be 'spool' (keep redirecting, record locally) or 'fail-closed' (503 while PostgreSQL fails)")) }
            }
            if let path = object.string("spoolPath", problems: &problems) {
                if path.isEmpty || StoreLocation.isPostgresURL(path) { problems.append(object.problem("spoolPath", "must be a file path")) }
                else { storeOutage.spoolPath = resolve(path, against: baseDirectory) }
            }
            if let timeout = object.integer("timeoutMs", problems: &problems) {
                if (100...60_000).contains(timeout) { storeOutage.timeoutMs = Int(timeout) }
                else { problems.append(object.problem("timeoutMs", "must be from 100 to 60000")) }
            }
            object.reportUnknownKeys(problems: &problems)
        }
        var publicDirectory: String?
        if let path = root.string("publicDir", problems: &problems) {
            if path.isEmpty { problems.append(root.problem("publicDir", "must be a folder path")) }
            else { publicDirectory = resolve(path, against: baseDirectory) }
        }

        var tokens = TokenPolicy.defaults
        if var object = root.object("tokens", problems: &problems) {
            if let length = object.integer("maxLength", problems: &problems) {
                // The whole request head is capped at 16 KiB by the server; a token must fit in it.
                if (64...8192).contains(length) { tokens.maxLength = Int(length) }
                else { problems.append(object.problem("maxLength", "must be from 64 to 8192 bytes")) }
            }
            if let skew = object.number("maxFutureSkewSeconds", problems: &problems) {
                if (0...86400).contains(skew) { tokens.maxFutureSkewMs = Int64(skew * 1000) }
                else { problems.append(object.problem("maxFutureSkewSeconds", "must be from 0 to 86400")) }
            }
            if let stale = object.number("staleAfterSeconds", problems: &problems) {
                if stale > 0, stale <= 366 * 86400 { tokens.staleAfterMs = Int64(stale * 1000) }
                else { problems.append(object.problem("staleAfterSeconds", "must be more than 0 and at most a year")) }
            }
            object.reportUnknownKeys(problems: &problems)
        }

        var accessLog = AccessLogSettings()
        if var object = root.object("accessLog", problems: &problems) {
            if let destination = object.string("destination", problems: &problems) {
                switch destination {
                case "off": accessLog.destination = .off
                case "stdout": accessLog.destination = .standardOutput
                case "stderr": accessLog.destination = .standardError
                case "": problems.append(object.problem("destination", "must be stdout, stderr, off or a file path"))
                default: accessLog.destination = .file(resolve(destination, against: baseDirectory))
                }
            }
            if let bits = object.integer("ipv4PrefixBits", problems: &problems) {
                if (0...32).contains(bits) { accessLog.clients.ipv4PrefixBits = Int(bits) }
                else { problems.append(object.problem("ipv4PrefixBits", "must be from 0 to 32")) }
            }
            if let bits = object.integer("ipv6PrefixBits", problems: &problems) {
                if (0...128).contains(bits) { accessLog.clients.ipv6PrefixBits = Int(bits) }
                else { problems.append(object.problem("ipv6PrefixBits", "must be from 0 to 128")) }
            }
            object.reportUnknownKeys(problems: &problems)
        }

        let (rateLimit, proxies) = readAbuseControls(&root, problems: &problems)
        let apps = readApps(&root, problems: &problems)
        let routing = readRoutingSettings(&root, baseDirectory: baseDirectory, problems: &problems)
        let links = readLinks(&root, signingConfigured: routing.signing != nil, problems: &problems)
        let (reporting, api) = readReporting(&root, baseDirectory: baseDirectory, problems: &problems)
        var unroutedRedirectTo: String?
        if var object = root.object("unrouted", problems: &problems) {
            if let id = object.string("redirectTo", problems: &problems) {
                if links.contains(where: { $0.id == id }) {
                    unroutedRedirectTo = id
                } else {
                    problems.append(object.problem("redirectTo", "must be the id of a link in links (\(links.map(\.id).joined(separator: ", ")))"))
                }
            }
            object.reportUnknownKeys(problems: &problems)
        }
        root.reportUnknownKeys(problems: &problems)

        var config = GatewayConfig(
            server: server, storePath: storePath, publicDirectory: publicDirectory,
            tokens: tokens, apps: apps, links: links, accessLog: accessLog, storeOutage: storeOutage)
            .with(rateLimit: rateLimit, proxies: proxies)
        config.healthChecks = routing.healthChecks
        config.geoIPDatabase = routing.geoIPDatabase
        config.bots = routing.bots
        config.signing = routing.signing
        config.reporting = reporting
        config.api = api
        config.unroutedRedirectTo = unroutedRedirectTo
        return config
    }

    private static func readApps(_ root: inout ObjectReader, problems: inout [ConfigProblem]) -> [AllowedApp] {
        guard let elements = root.array("apps", required: true, problems: &problems) else { return [] }
        if elements.isEmpty { problems.append(root.problem("apps", "must list at least one app")) }
        var apps: [AllowedApp] = []
        var bundleIds: Set<String> = []
        for (index, element) in elements.enumerated() {
            let key = "apps[\(index)]"
            guard var object = ObjectReader(element, key: key, problems: &problems) else { continue }
            let bundleId = object.string("bundleId", required: true, problems: &problems)
            let appleId = object.integer("appAppleId", required: true, problems: &problems)
            object.reportUnknownKeys(problems: &problems)
            if let bundleId {
                if !isBundleId(bundleId) {
                    problems.append(object.problem("bundleId", "must be a bundle ID of letters, digits, '-' and '.'"))
                } else if !bundleIds.insert(bundleId).inserted {
                    problems.append(object.problem("bundleId", "duplicate bundle ID '\(bundleId)'"))
                }
            }
            if let appleId, appleId <= 0 {
                problems.append(object.problem("appAppleId", "must be a positive integer"))
            }
            if let bundleId, let appleId, appleId > 0 {
                apps.append(AllowedApp(bundleId: bundleId, appAppleId: appleId))
            }
        }
        return apps
    }

    // MARK: Rules

    static func isBundleId(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255 && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."): true
            default: false
            }
        }
    }

    static func isLinkId(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"): true
            default: false
            }
        }
    }

    /// Joins a relative path onto the config file's folder.
    public static func resolve(_ path: String, against base: String) -> String {
        if path.hasPrefix("/") || base.isEmpty { return path }
        return base.hasSuffix("/") ? base + path : base + "/" + path
    }
}

/// Reads one JSON object's members by key, remembering which keys were used so the rest can be reported
/// as unknown (a misspelt key would otherwise be silently ignored).
struct ObjectReader {
    private let members: [JSONValue.Member]
    private var used: Set<String> = []
    let key: String

    init?(_ value: JSONValue, key: String, problems: inout [ConfigProblem]) {
        guard case .object(let members) = value else {
            problems.append(ConfigProblem(key: key, rule: "must be an object, not \(value.kindName)"))
            return nil
        }
        self.key = key
        self.members = members
        var seen: Set<String> = []
        for member in members where !seen.insert(member.key).inserted {
            problems.append(ConfigProblem(key: path(member.key), rule: "given more than once"))
        }
    }

    /// The object's keys, in the file's order.
    var memberKeys: [String] { members.map(\.key) }

    func path(_ member: String) -> String { key.isEmpty ? member : "\(key).\(member)" }

    func problem(_ member: String, _ rule: String) -> ConfigProblem {
        ConfigProblem(key: path(member), rule: rule)
    }

    private mutating func value(_ member: String, required: Bool, problems: inout [ConfigProblem]) -> JSONValue? {
        used.insert(member)
        guard let found = members.first(where: { $0.key == member })?.value else {
            if required { problems.append(problem(member, "is required")) }
            return nil
        }
        return found
    }

    mutating func string(_ member: String, required: Bool = false, problems: inout [ConfigProblem]) -> String? {
        guard let found = value(member, required: required, problems: &problems) else { return nil }
        guard case .string(let text) = found else {
            problems.append(problem(member, "must be a string, not \(found.kindName)"))
            return nil
        }
        return text
    }

    mutating func integer(_ member: String, required: Bool = false, problems: inout [ConfigProblem]) -> Int64? {
        guard let found = value(member, required: required, problems: &problems) else { return nil }
        guard case .integer(let number) = found else {
            problems.append(problem(member, "must be a whole number, not \(found.kindName)"))
            return nil
        }
        return number
    }

    mutating func number(_ member: String, required: Bool = false, problems: inout [ConfigProblem]) -> Double? {
        guard let found = value(member, required: required, problems: &problems) else { return nil }
        switch found {
        case .integer(let number): return Double(number)
        case .number(let number): return number
        default:
            problems.append(problem(member, "must be a number, not \(found.kindName)"))
            return nil
        }
    }

    mutating func bool(_ member: String, required: Bool = false, problems: inout [ConfigProblem]) -> Bool? {
        guard let found = value(member, required: required, problems: &problems) else { return nil }
        guard case .bool(let flag) = found else {
            problems.append(problem(member, "must be true or false, not \(found.kindName)"))
            return nil
        }
        return flag
    }

    mutating func array(_ member: String, required: Bool = false, problems: inout [ConfigProblem]) -> [JSONValue]? {
        guard let found = value(member, required: required, problems: &problems) else { return nil }
        guard case .array(let elements) = found else {
            problems.append(problem(member, "must be an array, not \(found.kindName)"))
            return nil
        }
        return elements
    }

    mutating func object(_ member: String, problems: inout [ConfigProblem]) -> ObjectReader? {
        guard let found = value(member, required: false, problems: &problems) else { return nil }
        return ObjectReader(found, key: path(member), problems: &problems)
    }

    func reportUnknownKeys(problems: inout [ConfigProblem]) {
        for member in members where !used.contains(member.key) {
            problems.append(problem(member.key, "unknown key"))
        }
    }
}
