extension ConfigLoader {
    /// - Parameter signingConfigured: whether the config has a `signing` secret, which `signedReference` needs.
    /// - Parameter appIds: the `apps[]` bundle ids a link's `app` may name.
    static func readLinks(_ root: inout ObjectReader, signingConfigured: Bool, appIds: [String], problems: inout [ConfigProblem]) -> [Link]
    {
        guard let elements = root.array("links", required: true, problems: &problems) else { return [] }
        if elements.isEmpty { problems.append(root.problem("links", "must list at least one link")) }
        var links: [Link] = []
        var ids: Set<String> = []
        var paths: Set<String> = []
        for (index, element) in elements.enumerated() {
            let key = "links[\(index)]"
            guard var object = ObjectReader(element, key: key, problems: &problems) else { continue }
            let before = problems.count
            func fail(_ field: String, _ rule: String) { problems.append(object.problem(field, rule)) }

            let id = object.string("id", required: true, problems: &problems)
            if let id {
                if !isLinkId(id) {
                    fail("id", "must be 1 to 64 lowercase letters, digits, '-' or '_'")
                } else if !ids.insert(id).inserted {
                    fail("id", "duplicate link id '\(id)'")
                }
            }

            let path = object.string("path", required: true, problems: &problems)
            if let path {
                if let rule = LinkPathRules.problem(with: path) {
                    fail("path", rule)
                } else if !paths.insert(path).inserted {
                    fail("path", "duplicate path '\(path)'")
                }
            }

            let country = object.string("country", required: true, problems: &problems)
            if let country, !CountryCodes.iso3166Alpha2.contains(country) {
                fail("country", "unknown country code '\(country)': use a lowercase ISO 3166-1 alpha-2 code such as 'nl'")
            }

            let destinations = readDestinations(&object, "destinations", required: true, problems: &problems) ?? []
            let countries = readCountries(&object, linkCountry: country, problems: &problems)

            var fallback: String?
            if let url = object.string("fallback", problems: &problems) {
                if let rule = DestinationURLRules.problem(with: url) { fail("fallback", rule) } else { fallback = url }
            }

            var action = InvalidTokenAction.reject
            if let text = object.string("onInvalidToken", problems: &problems) {
                if let parsed = InvalidTokenAction(rawValue: text) {
                    action = parsed
                } else {
                    fail("onInvalidToken", "must be 'reject' or 'redirect'")
                }
            }
            var token = TokenExpectation.required
            if let text = object.string("token", problems: &problems) {
                if let parsed = TokenExpectation(rawValue: text) {
                    token = parsed
                } else {
                    fail(
                        "token",
                        "must be 'required' (StoreKit appends a token) or 'none' (the link carries none, such as a US storefront link), not '\(text)'"
                    )
                }
            }
            let app = object.string("app", problems: &problems)
            if let app, !appIds.contains(app) {
                fail("app", "'\(app)' is not one of apps[]' bundle ids (\(appIds.joined(separator: ", ")))")
            }
            var parameters = readParameters(&object, problems: &problems)
            if let forwardToken = object.bool("forwardToken", problems: &problems), forwardToken { parameters.token = true }
            if parameters.signedReference && !signingConfigured {
                fail("parameters.signedReference", "needs a signing secret: add \"signing\": {\"secretFile\": \"...\"}")
            }
            let experiment = readExperiment(&object, problems: &problems)
            object.reportUnknownKeys(problems: &problems)

            if problems.count == before, let id, let path, let country {
                links.append(
                    Link(
                        id: id, path: path, country: country, destinations: destinations, onInvalidToken: action,
                        countries: countries, fallback: fallback, parameters: parameters, experiment: experiment, token: token, app: app))
            }
        }
        return links
    }

    /// A list of `{url, weight, health}`; nil when absent.
    private static func readDestinations(
        _ object: inout ObjectReader, _ member: String, required: Bool, problems: inout [ConfigProblem]
    ) -> [Destination]? {
        guard let list = object.array(member, required: required, problems: &problems) else { return nil }
        if list.isEmpty { problems.append(object.problem(member, "must list at least one destination")) }
        var destinations: [Destination] = []
        var urls: Set<String> = []
        for (index, entry) in list.enumerated() {
            guard var object = ObjectReader(entry, key: object.path("\(member)[\(index)]"), problems: &problems) else { continue }
            let destination = readDestination(&object, urls: &urls, duplicate: "duplicate destination in this list", problems: &problems)
            object.reportUnknownKeys(problems: &problems)
            if let destination { destinations.append(destination) }
        }
        return destinations
    }

    /// One `{url, weight, health}` (a destination's or an experiment variant's); nil without a URL. `urls`
    /// holds the list's URLs so far, and a repeat is refused with `duplicate`.
    private static func readDestination(
        _ object: inout ObjectReader, urls: inout Set<String>, duplicate: String, problems: inout [ConfigProblem]
    ) -> Destination? {
        let url = object.string("url", required: true, problems: &problems)
        let weight = object.number("weight", problems: &problems) ?? 1
        let health = readHealthCheck(&object, problems: &problems)
        if let url {
            if let rule = DestinationURLRules.problem(with: url) {
                problems.append(object.problem("url", rule))
            } else if !urls.insert(url).inserted {
                problems.append(object.problem("url", duplicate))
            }
        }
        if !(weight > 0) || !weight.isFinite {
            problems.append(object.problem("weight", "must be a number greater than 0"))
        }
        return url.map { Destination(url: $0, weight: weight, health: health) }
    }

    /// `"health": "origin"` (HEAD on the destination's origin) or an http(s) URL to GET.
    private static func readHealthCheck(_ object: inout ObjectReader, problems: inout [ConfigProblem]) -> DestinationHealthCheck? {
        guard let text = object.string("health", problems: &problems) else { return nil }
        if text == "origin" { return .origin }
        if let rule = HealthURLRules.problem(with: text) {
            problems.append(object.problem("health", "must be \"origin\" or an http:// or https:// URL: \(rule)"))
            return nil
        }
        return .url(text)
    }

    /// `countries`: `{"be": {}, "lu": {"destinations": [...]}}`, the shared link's other countries.
    private static func readCountries(
        _ object: inout ObjectReader, linkCountry: String?, problems: inout [ConfigProblem]
    ) -> [CountryDestinations] {
        guard var countries = object.object("countries", problems: &problems) else { return [] }
        var result: [CountryDestinations] = []
        for code in countries.memberKeys {
            guard CountryCodes.iso3166Alpha2.contains(code) else {
                problems.append(countries.problem(code, "unknown country code: use a lowercase ISO 3166-1 alpha-2 code such as 'be'"))
                _ = countries.object(code, problems: &problems)
                continue
            }
            if code == linkCountry {
                problems.append(countries.problem(code, "is the link's own country; its destinations are the link's `destinations`"))
            }
            guard var entry = countries.object(code, problems: &problems) else { continue }
            let destinations = readDestinations(&entry, "destinations", required: false, problems: &problems)
            entry.reportUnknownKeys(problems: &problems)
            result.append(CountryDestinations(country: code, destinations: destinations))
        }
        return result
    }

    private static func readParameters(_ object: inout ObjectReader, problems: inout [ConfigProblem]) -> CheckoutParameters {
        var parameters = CheckoutParameters()
        guard var options = object.object("parameters", problems: &problems) else { return parameters }
        parameters.externalPurchaseId = options.bool("externalPurchaseId", problems: &problems) ?? true
        parameters.signedReference = options.bool("signedReference", problems: &problems) ?? false
        parameters.country = options.bool("country", problems: &problems) ?? false
        parameters.link = options.bool("link", problems: &problems) ?? false
        parameters.token = options.bool("token", problems: &problems) ?? false
        if let name = options.string("externalPurchaseIdAs", problems: &problems) {
            if ParameterPattern(name) == nil || name.hasSuffix("*") {
                problems.append(
                    options.problem(
                        "externalPurchaseIdAs",
                        "must be a query parameter name of letters, digits, '.', '_' or '-', such as client_reference_id"))
            } else if name != "externalPurchaseId", CheckoutParameters.reservedNames.contains(name) {
                problems.append(options.problem("externalPurchaseIdAs", "'\(name)' is another of linkout's parameters"))
            } else {
                parameters.externalPurchaseIdName = name
            }
        }
        if let list = options.array("passThrough", problems: &problems) {
            for (index, element) in list.enumerated() {
                let key = options.path("passThrough[\(index)]")
                guard case .string(let text) = element, let pattern = ParameterPattern(text) else {
                    problems.append(
                        ConfigProblem(
                            key: key,
                            rule:
                                "must be a parameter name of letters, digits, '.', '_' or '-', optionally ending in '*' (such as \"utm_*\")"
                        ))
                    continue
                }
                if !text.hasSuffix("*"), parameters.takenNames.contains(text) {
                    problems.append(ConfigProblem(key: key, rule: "'\(text)' is linkout's own parameter and cannot be passed through"))
                    continue
                }
                parameters.passThrough.append(pattern)
            }
        }
        options.reportUnknownKeys(problems: &problems)
        if !parameters.externalPurchaseId && !parameters.signedReference && !parameters.token {
            problems.append(
                options.problem(
                    "externalPurchaseId",
                    "cannot be false unless signedReference or token is on: the checkout needs the id to tie a purchase to its token"))
        }
        return parameters
    }

    private static func readExperiment(_ object: inout ObjectReader, problems: inout [ConfigProblem]) -> Experiment? {
        guard var experiment = object.object("experiment", problems: &problems) else { return nil }
        let before = problems.count
        let name = experiment.string("name", required: true, problems: &problems)
        if let name, !isLinkId(name) {
            problems.append(experiment.problem("name", "must be 1 to 64 lowercase letters, digits, '-' or '_'"))
        }
        let endsText = experiment.string("endsAt", required: true, problems: &problems)
        let endsAt = endsText.flatMap(UTCDate.parse)
        if endsText != nil, endsAt == nil {
            problems.append(experiment.problem("endsAt", "must be a UTC date such as \"2026-12-31\" or \"2026-12-31T18:00:00Z\""))
        }
        var variants: [Experiment.Variant] = []
        if let list = experiment.array("variants", required: true, problems: &problems) {
            if list.count < 2 { problems.append(experiment.problem("variants", "must list at least two variants")) }
            var names: Set<String> = []
            var urls: Set<String> = []
            for (index, element) in list.enumerated() {
                guard var variant = ObjectReader(element, key: experiment.path("variants[\(index)]"), problems: &problems) else { continue }
                let variantName = variant.string("name", required: true, problems: &problems)
                let destination = readDestination(
                    &variant, urls: &urls, duplicate: "two variants cannot share a URL: their visits could not be told apart",
                    problems: &problems)
                variant.reportUnknownKeys(problems: &problems)
                if let variantName {
                    if !isLinkId(variantName) {
                        problems.append(variant.problem("name", "must be 1 to 64 lowercase letters, digits, '-' or '_'"))
                    } else if !names.insert(variantName).inserted {
                        problems.append(variant.problem("name", "duplicate variant '\(variantName)'"))
                    }
                }
                if let variantName, let destination {
                    variants.append(Experiment.Variant(name: variantName, destination: destination))
                }
            }
        }
        experiment.reportUnknownKeys(problems: &problems)
        guard problems.count == before, let name, let endsAt else { return nil }
        return Experiment(name: name, endsAtMs: endsAt, variants: variants)
    }
}

/// A health-check URL: http or https (internal health endpoints are often plain http), printable ASCII.
enum HealthURLRules {
    static func problem(with url: String) -> String? {
        if url.hasPrefix("http://") {
            return DestinationURLRules.problem(with: "https://" + url.dropFirst("http://".count))
        }
        return DestinationURLRules.problem(with: url)
    }
}
