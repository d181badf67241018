extension ConfigLoader {
    /// `reporting` (absent: nothing is sent to Apple) and `api` (absent: no line-item listener).
    static func readReporting(
        _ root: inout ObjectReader, baseDirectory: String, problems: inout [ConfigProblem]
    ) -> (ReportingSettings?, APISettings?) {
        var reporting: ReportingSettings?
        if var object = root.object("reporting", problems: &problems) {
            let keyFile = object.string("keyFile", required: true, problems: &problems)
            let keyId = object.string("keyId", required: true, problems: &problems)
            let issuerId = object.string("issuerId", required: true, problems: &problems)
            if let keyFile, keyFile.isEmpty {
                problems.append(object.problem("keyFile", "must be the path of the In-App Purchase key's .p8 file"))
            }
            if let keyId, !isKeyId(keyId) {
                problems.append(
                    object.problem(
                        "keyId",
                        "must be the key's 10-character ID from App Store Connect (capital letters and digits, such as 2X9R4HXF34), not \(JSONText.quote(keyId)) (\(keyId.count) characters)"
                    ))
            }
            if let issuerId, !isIssuerId(issuerId) {
                problems.append(object.problem("issuerId", "must be the issuer ID from App Store Connect (a UUID)"))
            }
            var settings = ReportingSettings(
                keyFile: keyFile.map { resolve($0, against: baseDirectory) } ?? "", keyId: keyId ?? "", issuerId: issuerId ?? "")
            if let hours = object.number("noPurchaseAfterHours", problems: &problems) {
                // Apple's UNREPORTED reminder comes on day 10: a window of 240 hours or more would always miss it.
                if hours >= 0, hours < 240 {
                    settings.noPurchaseAfterHours = hours
                } else {
                    problems.append(object.problem("noPurchaseAfterHours", "must be from 0 to under 240 (Apple reminds on day 10)"))
                }
            }
            if let seconds = object.number("gatherSeconds", in: 0...3600, "must be from 0 to 3600", problems: &problems) {
                settings.gatherSeconds = seconds
            }
            if let day = object.integer("monthCloseDay", in: 1...28, "must be a day of the month from 1 to 28", problems: &problems) {
                settings.monthCloseDay = day
            }
            for (key, keyPath) in [("productionURL", \ReportingSettings.productionURL), ("sandboxURL", \ReportingSettings.sandboxURL)] {
                guard let url = object.string(key, problems: &problems) else { continue }
                if isBaseURL(url) {
                    settings[keyPath: keyPath] = url.hasSuffix("/") ? String(url.dropLast()) : url
                } else {
                    problems.append(object.problem(key, "must be an https:// URL with a host and no path, query or fragment"))
                }
            }
            if let file = object.string("caFile", problems: &problems) {
                if file.isEmpty {
                    problems.append(object.problem("caFile", "must be a file path"))
                } else {
                    settings.caFile = resolve(file, against: baseDirectory)
                }
            }
            if let timeout = object.integer("timeoutSeconds", in: 1...300, "must be from 1 to 300", problems: &problems) {
                settings.timeoutSeconds = Int(timeout)
            }
            if let retry = object.number("retrySeconds", in: 1...3600, "must be from 1 to 3600", problems: &problems) {
                settings.retrySeconds = retry
            }
            if let wait = object.number("refusedRetrySeconds", in: 1...86400, "must be from 1 to 86400", problems: &problems) {
                settings.refusedRetrySeconds = wait
            }
            if let count = object.integer("refusedRetries", in: 0...50, "must be from 0 to 50", problems: &problems) {
                settings.refusedRetries = Int(count)
            }
            if let count = object.integer("maxConcurrentRequests", in: 1...256, "must be from 1 to 256", problems: &problems) {
                settings.maxConcurrentRequests = Int(count)
            }
            if let poll = object.number("pollSeconds", in: 0.05...3600, "must be from 0.05 to 3600", problems: &problems) {
                settings.pollSeconds = poll
            }
            object.reportUnknownKeys(problems: &problems)
            reporting = settings
        }

        var api: APISettings?
        if var object = root.object("api", problems: &problems) {
            let listenText = object.string("listen", required: true, problems: &problems)
            let keysFile = object.string("keysFile", required: true, problems: &problems)
            let listen = listenText.flatMap(ListenAddress.parse)
            if listenText != nil, listen == nil {
                problems.append(object.problem("listen", "must be HOST:PORT, such as 127.0.0.1:8081"))
            }
            if let keysFile, keysFile.isEmpty { problems.append(object.problem("keysFile", "must be a file path")) }
            if let listen, let keysFile, !keysFile.isEmpty {
                var settings = APISettings(listen: listen, keysFile: resolve(keysFile, against: baseDirectory))
                if let size = object.integer("maxBodyBytes", in: 1024...16_777_216, "must be from 1024 to 16777216", problems: &problems) {
                    settings.maxBodyBytes = Int(size)
                }
                if var limit = object.object("rateLimit", problems: &problems), let policy = readRatePolicy(&limit, problems: &problems) {
                    settings.rateLimit = policy
                }
                if let queued = object.integer("maxQueued", in: 1...100_000, "must be from 1 to 100000", problems: &problems) {
                    settings.maxQueued = Int(queued)
                }
                api = settings
            } else {
                _ = object.integer("maxBodyBytes", problems: &problems)
                if var limit = object.object("rateLimit", problems: &problems) { _ = readRatePolicy(&limit, problems: &problems) }
                _ = object.integer("maxQueued", problems: &problems)
            }
            object.reportUnknownKeys(problems: &problems)
        }
        return (reporting, api)
    }

    /// `notifications` (absent: Apple's notifications are not taken): the path on the shoppers' listener, the
    /// largest body, and the roots to trust instead of Apple Root CA – G3.
    static func readNotifications(
        _ root: inout ObjectReader, baseDirectory: String, linkPaths: [String], reportingConfigured: Bool, problems: inout [ConfigProblem]
    ) -> NotificationSettings? {
        guard var object = root.object("notifications", problems: &problems) else { return nil }
        let path = object.string("path", required: true, problems: &problems)
        var settings = NotificationSettings(path: path ?? "/")
        if let path {
            if !isNotificationPath(path) {
                problems.append(
                    object.problem(
                        "path", "must be a path such as /apple/notifications: '/' then letters, digits, '-', '_', '.' and '/', no query"))
            } else if linkPaths.contains(path) || LinkPathRules.reserved.contains(path) {
                problems.append(
                    object.problem(
                        "path", "must not be a link's path or one the gateway answers itself (/healthz, /readyz, /favicon.ico, /robots.txt)"
                    ))
            }
        }
        if let size = object.integer("maxBodyBytes", in: 1024...1_048_576, "must be from 1024 to 1048576", problems: &problems) {
            settings.maxBodyBytes = Int(size)
        }
        if var limit = object.object("rateLimit", problems: &problems), let policy = readRatePolicy(&limit, problems: &problems) {
            settings.rateLimit = policy
        }
        if let seconds = object.integer("bodyTimeoutSeconds", in: 1...60, "must be from 1 to 60", problems: &problems) {
            settings.bodyTimeoutSeconds = Int(seconds)
        }
        if let queued = object.integer("maxQueued", in: 1...10_000, "must be from 1 to 10000", problems: &problems) {
            settings.maxQueued = Int(queued)
        }
        if let rate = object.number("verificationsPerSecond", in: 0.1...1_000_000, "must be from 0.1 to 1000000", problems: &problems) {
            settings.verificationsPerSecond = rate
        }
        if let rate = object.number("newChainsPerSecond", in: 0.01...1_000_000, "must be from 0.01 to 1000000", problems: &problems) {
            settings.newChainsPerSecond = rate
        }
        if let files = object.array("rootCertificates", problems: &problems) {
            if files.isEmpty {
                problems.append(object.problem("rootCertificates", "must list at least one PEM file (leave it out for Apple Root CA - G3)"))
            }
            for file in files {
                guard case .string(let text) = file, !text.isEmpty else {
                    problems.append(object.problem("rootCertificates", "must be a list of PEM file paths"))
                    continue
                }
                settings.rootCertificateFiles.append(resolve(text, against: baseDirectory))
            }
        }
        if let history = object.bool("history", problems: &problems) { settings.history = history }
        if let days = object.integer(
            "historyFirstLookBackDays", in: 1...180, "must be from 1 to 180 (Apple keeps 180 days)", problems: &problems)
        {
            settings.historyFirstLookBackDays = days
        }
        if !reportingConfigured {
            problems.append(
                object.problem(
                    "path", "notifications need the reporting section: an UNREPORTED notification is acted on by reporting to Apple"))
        }
        object.reportUnknownKeys(problems: &problems)
        return settings
    }

    static func isNotificationPath(_ text: String) -> Bool {
        text.hasPrefix("/") && text.utf8.count >= 2 && text.utf8.count <= 256 && !text.contains("//")
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "/"):
                    true
                default: false
                }
            }
    }

    /// App Store Connect key IDs are ten upper-case letters and digits; allow a little more, never a path.
    /// App Store Connect's key IDs are 10 capitals and digits (`2X9R4HXF34`, also in the `.p8` file's name):
    /// a shorter or lower-case one is a typo Apple answers with a 401 on every report.
    static func isKeyId(_ text: String) -> Bool {
        text.utf8.count == 10
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
                default: false
                }
            }
    }

    static func isIssuerId(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) { if byte != UInt8(ascii: "-") { return false } } else if !byte.isHexDigit { return false }
        }
        return true
    }

    /// `https://host[:port]` and nothing after it.
    static func isBaseURL(_ text: String) -> Bool {
        guard text.hasPrefix("https://") else { return false }
        var rest = text.dropFirst("https://".count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        return !rest.isEmpty && !rest.contains(where: { "/?#@ \\".contains($0) }) && rest.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

fileprivate extension UInt8 {
    var isHexDigit: Bool {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}
