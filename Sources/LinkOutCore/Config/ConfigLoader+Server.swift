extension ConfigLoader {
    /// `server` and `durability`: the listeners, threads, limits and timeouts, and when a redirect may leave.
    static func readServer(_ root: inout ObjectReader, baseDirectory: String, problems: inout [ConfigProblem]) -> ServerSettings {
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
                if file.isEmpty {
                    problems.append(object.problem("adminKeysFile", "must be a file path"))
                } else {
                    server.adminKeysFile = resolve(file, against: baseDirectory)
                }
            }
            if let threads = object.integer("threads", in: 0...256, "must be from 0 (one per core) to 256", problems: &problems) {
                server.threads = Int(threads)
            }
            if let grace = object.number("drainGraceSeconds", in: 0...3600, "must be from 0 to 3600", problems: &problems) {
                server.drainGraceSeconds = grace
            }
            if let pending = object.integer("maxPendingRecords", in: 1...10_000_000, "must be from 1 to 10000000", problems: &problems) {
                server.maxPendingRecords = Int(pending)
            }
            if let head = object.integer("requestHeadTimeoutSeconds", in: 0...3600, "must be from 0 (off) to 3600", problems: &problems) {
                server.requestHeadTimeoutSeconds = Int(head)
            }
            if let idle = object.integer("idleTimeoutSeconds", in: 1...3600, "must be from 1 to 3600", problems: &problems) {
                server.idleTimeoutSeconds = Int(idle)
            }
            object.reportUnknownKeys(problems: &problems)
        }

        if var object = root.object("durability", problems: &problems) {
            let mode = object.string("mode", problems: &problems) ?? "strict"
            let window = object.integer("commitWindowMs", in: 1...1000, "must be from 1 to 1000", problems: &problems) ?? 50
            switch mode {
            case "strict": server.durability = .strict
            case "relaxed": server.durability = .relaxed(commitWindowMs: Int(window))
            default: problems.append(object.problem("mode", "must be 'strict' (302 after commit) or 'relaxed' (302 before commit)"))
            }
            object.reportUnknownKeys(problems: &problems)
        }
        return server
    }

    /// `store` (a SQLite path or a PostgreSQL URL; nil: the command line's or the default) and `storeOutage`.
    static func readStore(
        _ root: inout ObjectReader, baseDirectory: String, problems: inout [ConfigProblem]
    ) -> (path: String?, outage: StoreOutageSettings) {
        var storePath: String?
        if let path = root.string("store", problems: &problems) {
            if path.isEmpty {
                problems.append(root.problem("store", "must be a file path"))
            }
            // A PostgreSQL URL is not a path: it is kept as written.
            else {
                storePath = StoreLocation.isPostgresURL(path) ? path : resolve(path, against: baseDirectory)
            }
        }
        var storeOutage = StoreOutageSettings()
        if var object = root.object("storeOutage", problems: &problems) {
            if let text = object.string("mode", problems: &problems) {
                if let mode = StoreOutageSettings.Mode(rawValue: text) {
                    storeOutage.mode = mode
                } else {
                    problems.append(
                        object.problem(
                            "mode", "must be 'spool' (keep redirecting, record locally) or 'fail-closed' (503 while PostgreSQL fails)"))
                }
            }
            if let path = object.string("spoolPath", problems: &problems) {
                if path.isEmpty || StoreLocation.isPostgresURL(path) {
                    problems.append(object.problem("spoolPath", "must be a file path"))
                } else {
                    storeOutage.spoolPath = resolve(path, against: baseDirectory)
                }
            }
            if let timeout = object.integer("timeoutMs", in: 100...60_000, "must be from 100 to 60000", problems: &problems) {
                storeOutage.timeoutMs = Int(timeout)
            }
            object.reportUnknownKeys(problems: &problems)
        }
        return (storePath, storeOutage)
    }

    /// `publicDir`: the shopper pages' folder; nil: the built-in pages.
    static func readPublicDirectory(_ root: inout ObjectReader, baseDirectory: String, problems: inout [ConfigProblem]) -> String? {
        var publicDirectory: String?
        if let path = root.string("publicDir", problems: &problems) {
            if path.isEmpty {
                problems.append(root.problem("publicDir", "must be a folder path"))
            } else {
                publicDirectory = resolve(path, against: baseDirectory)
            }
        }
        return publicDirectory
    }

    /// `tokens`: the size, clock-skew and staleness rules of token validation.
    static func readTokenPolicy(_ root: inout ObjectReader, problems: inout [ConfigProblem]) -> TokenPolicy {
        var tokens = TokenPolicy.defaults
        if var object = root.object("tokens", problems: &problems) {
            // The whole request head is capped at 16 KiB by the server; a token must fit in it.
            if let length = object.integer("maxLength", in: 64...8192, "must be from 64 to 8192 bytes", problems: &problems) {
                tokens.maxLength = Int(length)
            }
            if let skew = object.number("maxFutureSkewSeconds", in: 0...86400, "must be from 0 to 86400", problems: &problems) {
                tokens.maxFutureSkewMs = Int64(skew * 1000)
            }
            if let stale = object.number("staleAfterSeconds", problems: &problems) {
                if stale > 0, stale <= 366 * 86400 {
                    tokens.staleAfterMs = Int64(stale * 1000)
                } else {
                    problems.append(object.problem("staleAfterSeconds", "must be more than 0 and at most a year"))
                }
            }
            object.reportUnknownKeys(problems: &problems)
        }
        return tokens
    }

    /// `accessLog`: where it goes and how much of a client address it keeps.
    static func readAccessLog(_ root: inout ObjectReader, baseDirectory: String, problems: inout [ConfigProblem]) -> AccessLogSettings {
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
            if let bits = object.integer("ipv4PrefixBits", in: 0...32, "must be from 0 to 32", problems: &problems) {
                accessLog.clients.ipv4PrefixBits = Int(bits)
            }
            if let bits = object.integer("ipv6PrefixBits", in: 0...128, "must be from 0 to 128", problems: &problems) {
                accessLog.clients.ipv6PrefixBits = Int(bits)
            }
            object.reportUnknownKeys(problems: &problems)
        }
        return accessLog
    }
}
