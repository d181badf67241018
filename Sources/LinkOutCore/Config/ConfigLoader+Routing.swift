extension ConfigLoader {
    struct RoutingSettings {
        var healthChecks = HealthCheckSettings()
        var geoIPDatabase: String?
        var bots = BotRules.defaults
        var signing: SigningSettings?
    }

    /// `healthChecks`, `geoip`, `bots` and `signing`: what destination choice and the checkout's
    /// parameters run on besides the links themselves.
    static func readRoutingSettings(_ root: inout ObjectReader, baseDirectory: String, problems: inout [ConfigProblem]) -> RoutingSettings {
        var settings = RoutingSettings()
        if var object = root.object("healthChecks", problems: &problems) {
            if let interval = object.number("intervalSeconds", in: 0.1...3600, "must be from 0.1 to 3600", problems: &problems) {
                settings.healthChecks.intervalMs = Int(interval * 1000)
            }
            if let timeout = object.integer("timeoutMs", in: 100...60_000, "must be from 100 to 60000", problems: &problems) {
                settings.healthChecks.timeoutMs = Int(timeout)
            }
            if let count = object.integer("downAfter", in: 1...100, "must be from 1 to 100", problems: &problems) {
                settings.healthChecks.downAfter = Int(count)
            }
            if let count = object.integer("upAfter", in: 1...100, "must be from 1 to 100", problems: &problems) {
                settings.healthChecks.upAfter = Int(count)
            }
            if let file = object.string("caFile", problems: &problems) {
                if file.isEmpty {
                    problems.append(object.problem("caFile", "must be a file path"))
                } else {
                    settings.healthChecks.caFile = resolve(file, against: baseDirectory)
                }
            }
            object.reportUnknownKeys(problems: &problems)
        }
        if var object = root.object("geoip", problems: &problems) {
            if let path = object.string("database", required: true, problems: &problems) {
                if path.isEmpty {
                    problems.append(object.problem("database", "must be a file path"))
                } else {
                    settings.geoIPDatabase = resolve(path, against: baseDirectory)
                }
            }
            object.reportUnknownKeys(problems: &problems)
        }
        if var object = root.object("bots", problems: &problems) {
            var extra: [String] = []
            if let list = object.array("userAgents", problems: &problems) {
                for (index, element) in list.enumerated() {
                    guard case .string(let text) = element, (3...200).contains(text.utf8.count) else {
                        problems.append(
                            ConfigProblem(
                                key: object.path("userAgents[\(index)]"),
                                rule: "must be a string of 3 to 200 bytes (matched as a case-insensitive substring)"))
                        continue
                    }
                    extra.append(text)
                }
            }
            settings.bots = BotRules(extra: extra)
            object.reportUnknownKeys(problems: &problems)
        }
        if var object = root.object("signing", problems: &problems) {
            if let file = object.string("secretFile", required: true, problems: &problems) {
                if file.isEmpty {
                    problems.append(object.problem("secretFile", "must be a file path"))
                } else {
                    settings.signing = SigningSettings(secretFile: resolve(file, against: baseDirectory))
                }
            }
            object.reportUnknownKeys(problems: &problems)
        }
        return settings
    }
}
