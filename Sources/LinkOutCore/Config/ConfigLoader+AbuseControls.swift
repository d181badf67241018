extension ConfigLoader {
    /// `rateLimit` (absent: no limit) and `proxies` (absent: no proxy trusted, the peer is the client).
    static func readAbuseControls(_ root: inout ObjectReader, problems: inout [ConfigProblem]) -> (RateLimiter.Policy?, ProxySettings) {
        var rateLimit: RateLimiter.Policy?
        if var object = root.object("rateLimit", problems: &problems) {
            rateLimit = readRatePolicy(&object, problems: &problems)
        }

        var proxies = ProxySettings()
        if var object = root.object("proxies", problems: &problems) {
            if let list = object.array("trusted", problems: &problems) {
                var ranges: [String] = []
                for (index, element) in list.enumerated() {
                    guard case .string(let range) = element, TrustedProxies(ranges: [range]) != nil else {
                        problems.append(
                            ConfigProblem(
                                key: "proxies.trusted[\(index)]", rule: "must be an address or CIDR range such as 10.0.0.0/8 or fd00::/8"))
                        continue
                    }
                    ranges.append(range)
                }
                proxies.trusted = TrustedProxies(ranges: ranges) ?? .none
            }
            if let header = object.string("header", problems: &problems) {
                if let parsed = ProxySettings.Header(rawValue: header) {
                    proxies.header = parsed
                } else {
                    problems.append(object.problem("header", "must be X-Forwarded-For or Forwarded"))
                }
            }
            if let header = object.string("countryHeader", problems: &problems) {
                if (1...64).contains(header.utf8.count), header.utf8.allSatisfy(PassThrough.isNameByte) {
                    proxies.countryHeader = header
                } else {
                    problems.append(
                        object.problem(
                            "countryHeader", "must be a header name such as CF-IPCountry, CloudFront-Viewer-Country or X-Country-Code"))
                }
            }
            object.reportUnknownKeys(problems: &problems)
            if proxies.countryHeader != nil, proxies.trusted.isEmpty {
                problems.append(object.problem("countryHeader", "is honoured only from trusted proxies: list them in proxies.trusted"))
            }
        }
        return (rateLimit, proxies)
    }

    /// A rate limit's object, `{ "requestsPerSecond": R, "burst": B }` (burst defaults to twice the rate): the
    /// shoppers' `rateLimit`, `notifications.rateLimit` and `api.rateLimit` read alike. Nil, with the
    /// problems noted, when it is not valid.
    static func readRatePolicy(_ object: inout ObjectReader, problems: inout [ConfigProblem]) -> RateLimiter.Policy? {
        defer { object.reportUnknownKeys(problems: &problems) }
        let rate = object.number("requestsPerSecond", required: true, problems: &problems)
        let burst = object.number("burst", problems: &problems)
        guard let rate else { return nil }
        guard rate > 0, rate <= 1_000_000 else {
            problems.append(object.problem("requestsPerSecond", "must be more than 0 and at most 1000000"))
            return nil
        }
        let burstValue = burst ?? rate * 2
        guard burstValue >= 1, burstValue <= 1_000_000 else {
            problems.append(object.problem("burst", "must be from 1 to 1000000"))
            return nil
        }
        return RateLimiter.Policy(ratePerSecond: rate, burst: burstValue)
    }
}
