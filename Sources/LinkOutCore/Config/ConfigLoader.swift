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

        let server = readServer(&root, baseDirectory: baseDirectory, problems: &problems)
        let store = readStore(&root, baseDirectory: baseDirectory, problems: &problems)
        let publicDirectory = readPublicDirectory(&root, baseDirectory: baseDirectory, problems: &problems)
        let tokens = readTokenPolicy(&root, problems: &problems)
        let accessLog = readAccessLog(&root, baseDirectory: baseDirectory, problems: &problems)
        let (rateLimit, proxies) = readAbuseControls(&root, problems: &problems)
        let apps = readApps(&root, problems: &problems)
        let routing = readRoutingSettings(&root, baseDirectory: baseDirectory, problems: &problems)
        let links = readLinks(&root, signingConfigured: routing.signing != nil, appIds: apps.map(\.bundleId), problems: &problems)
        let (reporting, api) = readReporting(&root, baseDirectory: baseDirectory, problems: &problems)
        let pages = readPages(&root, baseDirectory: baseDirectory, problems: &problems)
        let commission = readCommission(&root, problems: &problems)
        let notifications = readNotifications(
            &root, baseDirectory: baseDirectory, linkPaths: links.map(\.path), reportingConfigured: reporting != nil, problems: &problems)
        let paymentProviders = readPaymentProviders(
            &root, baseDirectory: baseDirectory, takenPaths: links.map(\.path) + [notifications?.path].compactMap { $0 },
            reportingConfigured: reporting != nil, problems: &problems)
        let unroutedRedirectTo = readUnrouted(&root, linkIds: links.map(\.id), problems: &problems)
        root.reportUnknownKeys(problems: &problems)

        var config = GatewayConfig(
            server: server, storePath: store.path, publicDirectory: publicDirectory, tokens: tokens, apps: apps, links: links,
            accessLog: accessLog, storeOutage: store.outage, rateLimit: rateLimit, proxies: proxies,
            healthChecks: routing.healthChecks, geoIPDatabase: routing.geoIPDatabase, bots: routing.bots, signing: routing.signing,
            reporting: reporting, api: api, notifications: notifications, unroutedRedirectTo: unroutedRedirectTo, pages: pages,
            commission: commission)
        config.paymentProviders = paymentProviders
        return config
    }

    /// `unrouted.redirectTo`: the link a valid token on a path no link serves is sent on through.
    private static func readUnrouted(_ root: inout ObjectReader, linkIds: [String], problems: inout [ConfigProblem]) -> String? {
        guard var object = root.object("unrouted", problems: &problems) else { return nil }
        var redirectTo: String?
        if let id = object.string("redirectTo", problems: &problems) {
            if linkIds.contains(id) {
                redirectTo = id
            } else {
                problems.append(object.problem("redirectTo", "must be the id of a link in links (\(linkIds.joined(separator: ", ")))"))
            }
        }
        object.reportUnknownKeys(problems: &problems)
        return redirectTo
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
            var tier = CommissionTier.standard
            if let text = object.string("commissionTier", problems: &problems) {
                if let parsed = CommissionTier(rawValue: text) {
                    tier = parsed
                } else {
                    problems.append(object.problem("commissionTier", "must be standard or reduced"))
                }
            }
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
                apps.append(AllowedApp(bundleId: bundleId, appAppleId: appleId, commissionTier: tier))
            }
        }
        return apps
    }

    // MARK: Rules

    static func isBundleId(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."):
                    true
                default: false
                }
            }
    }

    static func isLinkId(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
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
