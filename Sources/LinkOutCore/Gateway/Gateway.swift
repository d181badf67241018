/// The product's rules in one pure function: request facts in, `Decision` out. No I/O, no clock (the
/// caller passes the time), so every rule is testable without a socket.
public struct Gateway: Sendable {
    public let config: GatewayConfig
    private let routes: [String: Route]
    private let validator: TokenValidator

    /// A link with what is derived from it once, at load.
    private struct Route: Sendable {
        var link: Link
        var chooser: DestinationChooser
    }

    public init(config: GatewayConfig) {
        self.config = config
        self.validator = TokenValidator(policy: config.tokens, apps: config.apps)
        var routes: [String: Route] = [:]
        for link in config.links {
            routes[link.path] = Route(link: link, chooser: DestinationChooser(destinations: link.destinations))
        }
        self.routes = routes
    }

    /// - Parameter target: the request target as sent (`/nl?externalPurchaseToken=…&bundleId=…`).
    public func decide(method: RequestMethod, target: some Collection<UInt8>, nowMs: Int64) -> Decision {
        let queryStart = target.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? target.endIndex
        let path = String(decoding: target[target.startIndex..<queryStart], as: UTF8.self)
        var query = target[queryStart..<target.endIndex]
        if let first = query.first, first == UInt8(ascii: "?") { query = query.dropFirst() }
        if let hash = query.firstIndex(of: UInt8(ascii: "#")) { query = query[query.startIndex..<hash] }

        switch path {
        case "/healthz": return method == .other ? .methodNotAllowed : .health
        case "/readyz": return method == .other ? .methodNotAllowed : .readiness
        default: break
        }
        guard let route = routes[path] else { return .notFound }
        guard method != .other else { return .methodNotAllowed }

        switch acceptedToken(query: query, nowMs: nowMs) {
        case .success(let accepted):
            let token = accepted.token
            let destination = route.link.destinations[route.chooser.choose(externalPurchaseId: token.externalPurchaseId.utf8)]
            var parameters = [(name: "externalPurchaseId", value: token.externalPurchaseId)]
            if route.link.forwardToken {
                parameters.append((name: "externalPurchaseToken", value: TokenBase64.encodeURLSafe(encodedJSON(of: query))))
            }
            let record = TokenRecord(token: token, link: route.link, destination: destination.url, seenAt: nowMs, stale: accepted.stale)
            return .redirect(Redirect(
                location: LocationBuilder.location(destination: destination.url, parameters: parameters),
                record: method == .get ? .token(record) : nil,
                link: route.link.id, refusal: nil))
        case .failure(let rejection):
            guard route.link.onInvalidToken == .redirect else {
                return .reject(Refusal(rejection: rejection, link: route.link.id))
            }
            let destination = route.link.destinations[0].url
            let visit = UntokenedVisit(
                link: route.link.id, country: route.link.country, destination: destination,
                reason: rejection.reason, seenAt: nowMs)
            return .redirect(Redirect(
                location: destination, record: method == .get ? .untokened(visit) : nil,
                link: route.link.id, refusal: rejection))
        }
    }

    private func acceptedToken(query: some Collection<UInt8>, nowMs: Int64) -> Result<TokenValidator.Accepted, TokenRejection> {
        let parameters: LinkOutQuery
        switch LinkOutQuery.parse(query) {
        case .success(let parsed): parameters = parsed
        case .failure(let rejection): return .failure(rejection)
        }
        guard let encoded = parameters.token, !encoded.isEmpty else { return .failure(TokenRejection(.missingToken)) }
        guard let bundleId = parameters.bundleId, !bundleId.isEmpty else { return .failure(TokenRejection(.missingBundleId)) }
        let token: ExternalPurchaseToken
        switch TokenDecoder.decode(encoded, maxLength: validator.policy.maxLength) {
        case .success(let decoded): token = decoded
        case .failure(let rejection): return .failure(rejection)
        }
        return validator.validate(token, bundleIdParameter: String(decoding: bundleId, as: UTF8.self), nowMs: nowMs)
    }

    /// The token's JSON bytes again, for a link that forwards it. Only reached after the token was
    /// decoded and validated, so the decode cannot fail here.
    private func encodedJSON(of query: some Collection<UInt8>) -> [UInt8] {
        guard case .success(let parameters) = LinkOutQuery.parse(query), let encoded = parameters.token else { return [] }
        return TokenBase64.decode(encoded) ?? []
    }
}
