/// The product's rules in one pure function: request facts in, `Decision` out. No I/O, no clock (the
/// caller passes the time), so every rule is testable without a socket. Destination health comes in
/// through `HealthSlot`s the server's checker updates; reading one is an atomic load.
///
/// A class, though nothing in it changes after `init`: every loop asks it once per request, and a struct
/// this size (the config, the route table, the validator) was copied whole for each call, a retain and a
/// release of every reference it holds (callgrind: 3 % of the loop's instructions). A reference is
/// borrowed instead.
public final class Gateway: Sendable {
    public let config: GatewayConfig
    private let routes: RouteTable
    /// `unrouted.redirectTo`'s link, found once here rather than per stray request.
    private let unroutedRoute: Route?
    private let validator: TokenValidator
    /// What signs `linkoutRef` in a `Location`, and so what reads it back when line items quote it.
    public let signer: SignedReference?
    private let bots: BotRules
    /// Every health check the config names: the server's checker checks these.
    public let healthTargets: Set<HealthTarget>

    /// - Parameter health: where destinations' health is kept; nil: health checks off, all up.
    public init(config: GatewayConfig, health: DestinationHealthBoard? = nil) {
        self.config = config
        self.validator = TokenValidator(policy: config.tokens, apps: config.apps)
        self.signer = config.signing.map { SignedReference(secret: $0.secret) }
        self.bots = config.bots
        var targets: Set<HealthTarget> = []
        var routes: [Route] = []
        for (index, link) in config.links.enumerated() {
            let urls = link.destinationURLs
            func entry(_ destination: Destination, variant: String? = nil) -> DestinationSet.Entry {
                var slot: HealthSlot?
                if let target = Self.healthTarget(destination) {
                    targets.insert(target)
                    slot = health?.slot(for: target)
                }
                return DestinationSet.Entry(
                    url: destination.url, urlIndex: urls.firstIndex(of: destination.url)!, variant: variant, health: slot,
                    linkNames: link.parameters.takenNames)
            }
            func set(_ destinations: [Destination]) -> DestinationSet {
                DestinationSet(entries: destinations.map { entry($0) }, weights: destinations)
            }
            let ownSet = set(link.destinations)
            var sets = [link.country: ownSet]
            // A country without destinations of its own shares the link's set (and its health slots).
            for other in link.countries { sets[other.country] = other.destinations.map(set) ?? ownSet }
            let experiment = link.experiment.map { experiment in
                Route.Split(
                    experiment: experiment,
                    set: DestinationSet(
                        entries: experiment.variants.map { entry($0.destination, variant: $0.name) },
                        weights: experiment.variants.map(\.destination)))
            }
            routes.append(
                Route(
                    link: link, index: index, sets: sets, ownSet: ownSet, experiment: experiment,
                    fallback: link.fallback.map { entry(Destination(url: $0)) }))
        }
        let table = RouteTable(routes)
        self.routes = table
        self.unroutedRoute = config.unroutedRedirectTo.flatMap { id in table.all.first { $0.link.id == id } }
        self.healthTargets = targets
    }

    /// The destination sets whose every destination is down now, by name (`nl`, `eu/be`,
    /// `nl/experiment:price-test`), with where their shoppers go instead: for the log line an operator
    /// needs when a link has nowhere healthy to send anyone.
    /// An experiment counts only while it runs.
    public func setsWithEveryDestinationDown(atMs nowMs: Int64) -> [(name: String, instead: String)] {
        var down: [(String, String)] = []
        for route in routes.all {
            var named = route.sets.sorted { $0.key < $1.key }.map { (country, set) in
                (country == route.link.country ? route.link.id : "\(route.link.id)/\(country)", set)
            }
            if let experiment = route.experiment, experiment.experiment.isRunning(atMs: nowMs) {
                named.append(("\(route.link.id)/experiment:\(experiment.experiment.name)", experiment.set))
            }
            for (name, set) in named where set.entries.allSatisfy({ !$0.isUp }) {
                down.append((name, route.fallback?.url ?? "the destination up most recently"))
            }
        }
        return down
    }

    private static func healthTarget(_ destination: Destination) -> HealthTarget? {
        switch destination.health {
        case nil: nil
        case .origin: HealthTarget.origin(of: destination.url)
        case .url(let url): HealthTarget(url: url, method: .get)
        }
    }

    /// - Parameter target: the request target as sent (`/nl?externalPurchaseToken=…&bundleId=…`).
    public func decide(
        method: RequestMethod, target: some Collection<UInt8>, nowMs: Int64, context: any RequestContext = NoRequestContext()
    ) -> Decision {
        Array(target).withUnsafeBytes { decide(method: method, target: $0, nowMs: nowMs, context: context) }
    }

    /// The server's entry point: the target's bytes where the connection read them. A concrete type rather than a
    /// generic one, so the whole path below is specialised for it at compile time instead of going through
    /// a witness table for every byte. The context is generic (`some`) down the whole path rather than an
    /// existential: the server's context is larger than an existential's inline buffer, and boxing it cost
    /// an allocation and a copy per request.
    public func decide(method: RequestMethod, target: UnsafeRawBufferPointer, nowMs: Int64, context: some RequestContext) -> Decision {
        let target = RequestTarget(target)
        if let builtIn = BuiltInPath(target.path) { return method == .other ? .methodNotAllowed : builtIn.decision }
        guard let route = routes[target.path] else {
            return method == .other
                ? .notFound : unrouted(method: method, path: target.path, query: target.query, nowMs: nowMs, context: context)
        }
        guard method != .other else { return .methodNotAllowed }
        return linkOut(route, method: method, query: target.query, nowMs: nowMs, context: context)
    }

    /// The link `unrouted` visits are recorded under.
    public static let unroutedLink = "unrouted"

    /// A path no link serves. Without a token, or with one that fails validation, it is a plain 404. A valid
    /// token is recorded all the same (Apple expects it reported, and a 404 alone would hide an Info.plist
    /// pointing at the wrong path): as link `unrouted`, with the path, sent on through `unrouted.redirectTo`'s
    /// link if the config names one, else answered 404 once committed.
    private func unrouted(
        method: RequestMethod, path: UnsafeRawBufferPointer, query: UnsafeRawBufferPointer, nowMs: Int64, context: some RequestContext
    ) -> Decision {
        // Most stray requests (scanners, probes) carry no token: no decoding for them.
        guard case .success(let positions) = LinkOutQuery.scan(query), positions.token != nil,
            case .valid(let valid) = acceptedToken(query: query, positions: positions, nowMs: nowMs)
        else { return .notFound }
        let kept = UnroutedPath.sanitise(path)
        if let route = unroutedRoute {
            guard case .redirect(var redirect) = linkOut(route, token: valid, method: method, query: query, nowMs: nowMs, context: context),
                case .token(var record) = redirect.record
            else { return .notFound }
            record.link = Self.unroutedLink
            record.path = kept
            redirect.record = .token(record)
            redirect.unroutedPath = kept
            return .redirect(redirect)
        }
        let kind = visitKind(method: method, context: context)
        let record = TokenRecord(
            token: valid.token, link: Self.unroutedLink,
            country: CountrySource.detect(proxies: config.proxies, context: context) ?? "", destination: "",
            seenAt: nowMs, stale: valid.stale, kind: kind, path: kept)
        return .recordThenNotFound(UnroutedVisit(record: record, unusualToken: valid.token.unusualType))
    }

    /// A request on a link's path. The steps: the token, the visit's kind, the country, the destination,
    /// the query, the record.
    private func linkOut(
        _ route: Route, method: RequestMethod, query: UnsafeRawBufferPointer, nowMs: Int64, context: some RequestContext
    ) -> Decision {
        if route.link.token == .notExpected, Self.carriesNoToken(query) {
            return tap(route, method: method, query: query, nowMs: nowMs, context: context)
        }
        let outcome = acceptedToken(query: query, nowMs: nowMs)
        switch consume outcome {
        case .valid(let valid):
            return linkOut(route, token: valid, method: method, query: query, nowMs: nowMs, context: context)
        case .refused(let rejection):
            // A refusal needs neither the visit's kind nor its country: a flood of junk costs no header reads.
            guard route.link.onInvalidToken == .redirect else {
                return .reject(Refusal(rejection: rejection, link: route.link.id, linkIndex: route.index))
            }
            let visit = visit(route, method: method, context: context)
            let (entry, allDown) = destination(in: visit.set, route: route, sticky: nil)
            let record = UntokenedVisit(
                link: route.link.id, country: visit.country, destination: entry.url, reason: .refused(rejection.reason),
                seenAt: nowMs, kind: visit.kind)
            return .redirect(
                Redirect(
                    location: entry.url, record: .untokened(record), link: route.link.id, linkIndex: route.index,
                    destinationIndex: entry.urlIndex, refusal: rejection, kind: visit.kind, allDown: allDown))
        }
    }

    /// A link-out with a valid token.
    private func linkOut(
        _ route: Route, token valid: ValidToken, method: RequestMethod, query: UnsafeRawBufferPointer, nowMs: Int64,
        context: some RequestContext
    ) -> Decision {
        let link = route.link
        let visit = visit(route, method: method, context: context)
        let id = valid.token.externalPurchaseId
        let running = route.experiment.flatMap { $0.experiment.isRunning(atMs: nowMs) ? $0 : nil }
        let (entry, allDown) = destination(in: running?.set ?? visit.set, route: route, sticky: id)
        var parameters = CheckoutQuery.linkouts(
            link.parameters, externalPurchaseId: id, signer: signer, nowMs: nowMs, link: link.id, country: visit.country,
            tokenJSON: valid.json)
        PassThrough.append(from: query, patterns: link.parameters.passThrough, taken: entry.takenNames, to: &parameters)
        let record = TokenRecord(
            token: valid.token, link: link.id, country: visit.country, destination: entry.url, seenAt: nowMs,
            stale: valid.stale, kind: visit.kind,
            // With every variant down the shopper went to the fallback: in no variant, so in no experiment.
            experiment: entry.variant == nil ? nil : running?.experiment.name, variant: running == nil ? nil : entry.variant)
        return .redirect(
            Redirect(
                location: entry.template.location(parameters), record: .token(record), link: link.id,
                linkIndex: route.index, destinationIndex: entry.urlIndex, refusal: nil, kind: visit.kind, allDown: allDown,
                unusualToken: valid.token.unusualType))
    }

    /// A request without a token on a link that expects none: sent on as any link-out is (the link's
    /// country, a running experiment, the destinations that are up, weighted), recorded as a tap. With no
    /// token to hash, the client's address keeps a shopper on one destination and one variant. Its
    /// parameters are those that need no token (`CheckoutQuery.taps`) and the passed-through ones.
    private func tap(
        _ route: Route, method: RequestMethod, query: UnsafeRawBufferPointer, nowMs: Int64, context: some RequestContext
    ) -> Decision {
        let link = route.link
        let visit = visit(route, method: method, context: context)
        let running = route.experiment.flatMap { $0.experiment.isRunning(atMs: nowMs) ? $0 : nil }
        let (entry, allDown) = destination(in: running?.set ?? visit.set, route: route, sticky: context.clientAddress())
        var parameters = CheckoutQuery.taps(link.parameters, link: link.id, country: visit.country)
        PassThrough.append(from: query, patterns: link.parameters.passThrough, taken: entry.takenNames, to: &parameters)
        let record = UntokenedVisit(
            link: link.id, country: visit.country, destination: entry.url, reason: .tap, seenAt: nowMs, kind: visit.kind)
        return .redirect(
            Redirect(
                location: entry.template.location(parameters), record: .untokened(record), link: link.id,
                linkIndex: route.index, destinationIndex: entry.urlIndex, refusal: nil, kind: visit.kind, allDown: allDown))
    }

    /// Whether a query has no `externalPurchaseToken`, or an empty one: a tap on a link that expects none.
    /// A query that cannot be read (a parameter twice, a bad escape) is not one: it is refused, or sent on,
    /// as on any link.
    private static func carriesNoToken(_ query: UnsafeRawBufferPointer) -> Bool {
        guard case .success(let positions) = LinkOutQuery.scan(query) else { return false }
        guard let range = positions.token else { return true }
        return range.isEmpty
    }

    /// Who a visit on a link is from, and the country whose destinations it goes to.
    private struct Visit {
        var kind: VisitKind
        var country: String
        var set: DestinationSet
    }

    private func visit(_ route: Route, method: RequestMethod, context: some RequestContext) -> Visit {
        let kind = visitKind(method: method, context: context)
        guard route.isShared else { return Visit(kind: kind, country: route.link.country, set: route.ownSet) }
        let (country, set) = servedCountry(route, context: context)
        return Visit(kind: kind, country: country, set: set)
    }

    /// Shopper, HEAD, prefetch or bot.
    private func visitKind(method: RequestMethod, context: some RequestContext) -> VisitKind {
        bots.kind(
            method: method, purpose: context.header("Purpose"), secPurpose: context.header("Sec-Purpose"),
            userAgent: context.header("User-Agent"))
    }

    /// Where a visit goes, and whether every destination it could go to was down. With a key (`sticky`: a
    /// token's id, or a tap's client address), the weighted rendezvous choice for it, so the same token (or
    /// shopper) lands on the same destination; without one (a refused token sent on), the first destination up. With none up: the link's fallback, else the
    /// least-bad choice for the token, else the first destination.
    private func destination(in set: DestinationSet, route: Route, sticky id: String?) -> (entry: DestinationSet.Entry, allDown: Bool) {
        if let id {
            if let chosen = set.choose(id) { return (chosen, false) }
            return (route.fallback ?? set.leastBad(id), true)
        }
        if let up = set.firstUp { return (up, false) }
        return (route.fallback ?? set.entries[0], true)
    }

    /// The position in `config.links` of the link a target's path names, nil for any other path: all the
    /// rate limit needs, so a client over its rate costs no token decoding.
    public func linkIndex(target: UnsafeRawBufferPointer) -> Int? {
        routes[RequestTarget(target).path]?.index
    }

    /// A shared link's country for this request, with its destinations: detected, if the link serves it,
    /// else the link's own.
    private func servedCountry(_ route: Route, context: some RequestContext) -> (String, DestinationSet) {
        guard let detected = CountrySource.detect(proxies: config.proxies, context: context),
            let set = route.sets[detected]
        else { return (route.link.country, route.ownSet) }
        return (detected, set)
    }

    /// A token that passed validation, and its bytes as the query holds them.
    private struct ValidToken {
        var token: ExternalPurchaseToken
        var stale: Bool
        var sent: LinkOutQuery.Value

        /// The token's JSON, for a link that forwards it: decoded again, as that is rarer than keeping a copy
        /// of every token's JSON. It decoded once, so it decodes again.
        var json: [UInt8] { sent.withBytes { TokenBase64.decode($0) } ?? [] }
    }

    /// What a request's token came to. Not a `Result`: Swift copies and destroys a generic enum of a
    /// struct through its generic runtime functions.
    private enum TokenOutcome {
        case valid(ValidToken)
        case refused(TokenRejection)
    }

    /// The query's token, validated. `positions`: the query already scanned, if it was.
    private func acceptedToken(
        query: UnsafeRawBufferPointer, positions scanned: LinkOutQuery.Positions? = nil, nowMs: Int64
    ) -> TokenOutcome {
        let positions: LinkOutQuery.Positions
        if let scanned {
            positions = scanned
        } else {
            switch LinkOutQuery.scan(query) {
            case .success(let found): positions = found
            case .failure(let rejection): return .refused(rejection)
            }
        }
        // The length cap applies to the bytes as sent, before any decoding work.
        if let range = positions.token, range.count > validator.policy.maxLength {
            return .refused(TokenRejection(.tokenTooLong))
        }
        guard let token = positions.decodedToken(in: query), let bundleId = positions.decodedBundleId(in: query) else {
            return .refused(TokenRejection(.malformedQuery))
        }
        guard let token, !token.isEmpty else { return .refused(TokenRejection(.missingToken)) }
        guard let bundleId, !bundleId.isEmpty else { return .refused(TokenRejection(.missingBundleId)) }
        let decoded: ExternalPurchaseToken
        switch token.withBytes({ TokenDecoder.decode($0, maxLength: validator.policy.maxLength) }) {
        case .success(let value): decoded = value
        case .failure(let rejection): return .refused(rejection)
        }
        switch bundleId.withBytes({ validator.staleness(of: decoded, bundleIdParameter: $0, nowMs: nowMs) }) {
        case .success(let stale): return .valid(ValidToken(token: decoded, stale: stale, sent: token))
        case .failure(let rejection): return .refused(rejection)
        }
    }
}
