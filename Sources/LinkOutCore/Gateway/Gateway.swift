/// The product's rules in one pure function: request facts in, `Decision` out. No I/O, no clock (the
/// caller passes the time), so every rule is testable without a socket.
public struct Gateway: Sendable {
    public let config: GatewayConfig
    private let routes: [String: Route]
    private let validator: TokenValidator

    /// A link with what is derived from it once, at load.
    private struct Route: Sendable {
        var link: Link
        var index: Int
        var chooser: DestinationChooser
        var templates: [LocationTemplate]
    }

    public init(config: GatewayConfig) {
        self.config = config
        self.validator = TokenValidator(policy: config.tokens, apps: config.apps)
        var routes: [String: Route] = [:]
        for (index, link) in config.links.enumerated() {
            routes[link.path] = Route(
                link: link, index: index, chooser: DestinationChooser(destinations: link.destinations),
                templates: link.destinations.map { LocationTemplate(destination: $0.url) })
        }
        self.routes = routes
    }

    /// - Parameter target: the request target as sent (`/nl?externalPurchaseToken=…&bundleId=…`).
    public func decide(method: RequestMethod, target: some Collection<UInt8>, nowMs: Int64) -> Decision {
        Array(target).withUnsafeBytes { decide(method: method, target: $0, nowMs: nowMs) }
    }

    /// The server's entry point: the target's bytes where evhttp keeps them. A concrete type rather than a
    /// generic one, so the whole path below is specialised for it at compile time instead of going through
    /// a witness table for every byte.
    public func decide(method: RequestMethod, target: UnsafeRawBufferPointer, nowMs: Int64) -> Decision {
        var pathEnd = 0
        while pathEnd < target.count, target[pathEnd] != UInt8(ascii: "?"), target[pathEnd] != UInt8(ascii: "#") {
            pathEnd += 1
        }
        var queryEnd = pathEnd
        if pathEnd < target.count, target[pathEnd] == UInt8(ascii: "?") {
            queryEnd = pathEnd + 1
            while queryEnd < target.count, target[queryEnd] != UInt8(ascii: "#") { queryEnd += 1 }
        }
        let path = String(decoding: UnsafeRawBufferPointer(rebasing: target[0..<pathEnd]), as: UTF8.self)
        let query = UnsafeRawBufferPointer(rebasing: target[min(pathEnd + 1, queryEnd)..<queryEnd])

        switch path {
        case "/healthz": return method == .other ? .methodNotAllowed : .health
        case "/readyz": return method == .other ? .methodNotAllowed : .readiness
        default: break
        }
        guard let route = routes[path] else { return .notFound }
        guard method != .other else { return .methodNotAllowed }

        switch acceptedToken(query: query, nowMs: nowMs) {
        case .success(let (accepted, json)):
            let token = accepted.token
            let chosen = route.chooser.choose(externalPurchaseId: token.externalPurchaseId)
            let destination = route.link.destinations[chosen]
            var parameters = "externalPurchaseId=" + token.externalPurchaseId
            if route.link.forwardToken {
                parameters += "&externalPurchaseToken=" + TokenBase64.encodeURLSafe(json)
            }
            let record = TokenRecord(token: token, link: route.link, destination: destination.url, seenAt: nowMs, stale: accepted.stale)
            return .redirect(Redirect(
                location: route.templates[chosen].location(parameters),
                record: method == .get ? .token(record) : nil,
                link: route.link.id, linkIndex: route.index, destinationIndex: chosen, refusal: nil))
        case .failure(let rejection):
            guard route.link.onInvalidToken == .redirect else {
                return .reject(Refusal(rejection: rejection, link: route.link.id, linkIndex: route.index))
            }
            let destination = route.link.destinations[0].url
            let visit = UntokenedVisit(
                link: route.link.id, country: route.link.country, destination: destination,
                reason: rejection.reason, seenAt: nowMs)
            return .redirect(Redirect(
                location: destination, record: method == .get ? .untokened(visit) : nil,
                link: route.link.id, linkIndex: route.index, destinationIndex: 0, refusal: rejection))
        }
    }

    /// The validated token and its JSON bytes (kept for links that forward the token).
    private func acceptedToken(query: UnsafeRawBufferPointer, nowMs: Int64) -> Result<(TokenValidator.Accepted, [UInt8]), TokenRejection> {
        let positions: LinkOutQuery.Positions
        switch LinkOutQuery.scan(query) {
        case .success(let found): positions = found
        case .failure(let rejection): return .failure(rejection)
        }
        // The length cap applies to the bytes as sent, before any decoding work.
        if let range = positions.token, range.count > validator.policy.maxLength {
            return .failure(TokenRejection(.tokenTooLong))
        }
        guard let token = positions.decodedToken(in: query), let bundleId = positions.decodedBundleId(in: query) else {
            return .failure(TokenRejection(.malformedQuery))
        }
        guard let token, !token.isEmpty else { return .failure(TokenRejection(.missingToken)) }
        guard let bundleId, !bundleId.isEmpty else { return .failure(TokenRejection(.missingBundleId)) }
        let decoded: (token: ExternalPurchaseToken, json: [UInt8])
        switch token.withBytes({ TokenDecoder.decodeKeepingJSON($0, maxLength: validator.policy.maxLength) }) {
        case .success(let value): decoded = value
        case .failure(let rejection): return .failure(rejection)
        }
        let bundleIdText = bundleId.withBytes { String(decoding: $0, as: UTF8.self) }
        return validator.validate(decoded.token, bundleIdParameter: bundleIdText, nowMs: nowMs).map { ($0, decoded.json) }
    }
}
