/// Tokens an app's backend hands over (`POST /v1/tokens`, a line of `linkout tokens import`): a custom-link
/// token the app asked StoreKit for (Japan's and Brazil's `IN_APP` and `LINK_OUT`, the EU's) may never pass a
/// link, yet must be reported all the same. Each is decoded and validated exactly as a link's token is
/// (`TokenDecoder`, `TokenValidator`), and judged on its own: a valid token is never dropped for its
/// neighbour's sake.
///
/// The body is one token, `{"token": "…", "bundleId": "…", "country": "jp"}`, or a batch of up to
/// `maxBatch`, `{"tokens": [ … ]}`. `country` (optional) is the storefront, ISO 3166-1 alpha-2.
public enum TokenRegistration {
    public static let maxBatch = 1_000

    /// One token of the body, as sent.
    public struct Entry: Sendable, Equatable {
        /// Where its problems are reported: `tokens[3]`, or `` for a body of one token.
        public var path: String
        public var token: String?
        public var bundleId: String?
        public var country: String?
        /// Problems of its shape (a member of the wrong type, an unknown one), found while reading.
        public var problems: [LineItemProblem]
    }

    /// What became of one token.
    public enum Verdict: Sendable, Equatable {
        /// Valid: to be recorded (or found already recorded).
        case accepted(TokenRecord)
        /// Refused, with the reason code a link would have answered, and every problem.
        case refused(reason: String, problems: [LineItemProblem])
    }

    /// Reads the body; a body that is not one of the two shapes is refused whole, with every problem.
    public static func parse(_ body: [UInt8]) -> Result<[Entry], LineItemError> {
        let document: JSONValue
        do {
            document = try JSONValue.parse(body)
        } catch {
            return .failure(LineItemError(problems: [LineItemProblem(field: "", message: "the body is not JSON: \(error)")]))
        }
        guard case .object(let members) = document else {
            return .failure(
                LineItemError(problems: [
                    LineItemProblem(field: "", message: "the body must be a JSON object: {\"token\": …} or {\"tokens\": [ … ]}")
                ]))
        }
        if let batch = members.first(where: { $0.key == "tokens" }) {
            guard members.count == 1 else {
                return .failure(
                    LineItemError(problems: [LineItemProblem(field: "", message: "a batch is {\"tokens\": [ … ]} and nothing beside it")]))
            }
            guard case .array(let elements) = batch.value, (1...maxBatch).contains(elements.count) else {
                return .failure(
                    LineItemError(problems: [LineItemProblem(field: "tokens", message: "must be an array of 1 to \(maxBatch) tokens")]))
            }
            return .success(elements.enumerated().map { entry($0.element, path: "tokens[\($0.offset)]") })
        }
        return .success([entry(document, path: "")])
    }

    private static func entry(_ value: JSONValue, path: String) -> Entry {
        var entry = Entry(path: path, problems: [])
        guard case .object(let members) = value else {
            entry.problems.append(LineItemProblem(field: path, message: "must be an object: {\"token\": …, \"bundleId\": …}"))
            return entry
        }
        for member in members {
            let field = LineItemProblem.path(path, member.key)
            switch (member.key, member.value) {
            case ("token", .string(let text)): entry.token = text
            case ("bundleId", .string(let text)): entry.bundleId = text
            case ("country", .string(let text)): entry.country = text
            case ("country", .null): break
            case ("token", _), ("bundleId", _), ("country", _):
                entry.problems.append(LineItemProblem(field: field, message: "must be a string"))
            default:
                entry.problems.append(
                    LineItemProblem(field: field, message: "is not a member of a token registration (token, bundleId, country)"))
            }
        }
        return entry
    }

    /// Judges one entry as the link path would, at `nowMs`. `maxLength` is `tokens.maxLength`.
    public static func judge(_ entry: Entry, validator: TokenValidator, maxLength: Int, nowMs: Int64) -> Verdict {
        var problems = entry.problems
        let field = { (name: String) in LineItemProblem.path(entry.path, name) }
        if entry.token?.isEmpty ?? true {
            problems.append(LineItemProblem(field: field("token"), message: "is required: the token as StoreKit gave it"))
        }
        if entry.bundleId?.isEmpty ?? true {
            problems.append(LineItemProblem(field: field("bundleId"), message: "is required: the app's bundle ID"))
        }
        var country: String?
        if let given = entry.country {
            let lower = given.lowercased()
            if CountryCodes.iso3166Alpha2.contains(lower) {
                country = lower
            } else {
                problems.append(
                    LineItemProblem(
                        field: field("country"),
                        message: "must be the storefront's ISO 3166-1 alpha-2 code, such as jp, not \(JSONText.quote(given))"))
            }
        }
        guard problems.isEmpty, let text = entry.token, let bundleId = entry.bundleId else {
            return .refused(reason: "malformed", problems: problems)
        }
        let token: ExternalPurchaseToken
        switch TokenDecoder.decode(Array(text.utf8), maxLength: maxLength) {
        case .success(let decoded): token = decoded
        case .failure(let rejection): return refused(rejection, path: entry.path)
        }
        let stale: Bool
        switch validator.validate(token, bundleIdParameter: bundleId, nowMs: nowMs) {
        case .success(let accepted):
            stale = accepted.stale
        case .failure(let rejection) where rejection.reason == .expired:
            // A link turns a shopper away with an expired token, but the token was minted and Apple
            // expects it reported: a registration keeps it.
            stale = true
        case .failure(let rejection):
            return refused(rejection, path: entry.path)
        }
        return .accepted(
            TokenRecord(
                token: token, link: registeredLink, country: country ?? "", destination: "", seenAt: nowMs, stale: stale, kind: .registered)
        )
    }

    /// The `link` a registration is recorded under: it came through none.
    public static let registeredLink = "registered"

    private static func refused(_ rejection: TokenRejection, path: String) -> Verdict {
        let name =
            rejection.reason == .bundleIdMismatch || rejection.reason == .unknownApp
            ? "bundleId"
            : rejection.field.map { "token.\($0.rawValue)" } ?? "token"
        return .refused(
            reason: rejection.reason.rawValue,
            problems: [
                LineItemProblem(field: LineItemProblem.path(path, name), message: message(rejection))
            ])
    }

    /// The refusal in words, with its code as a link's `X-Linkout-Reason` names it.
    static func message(_ rejection: TokenRejection) -> String {
        let why: String
        switch rejection.reason {
        case .tokenTooLong: why = "is longer than tokens.maxLength"
        case .tokenNotBase64: why = "is not base64 (send the token exactly as StoreKit gave it)"
        case .tokenNotJSON: why = "does not decode to a token's JSON object"
        case .missingField: why = "lacks a field every token has"
        case .wrongFieldType: why = "has a field of the wrong type"
        case .invalidExternalPurchaseId: why = "has an externalPurchaseId that is not a UUID (optionally prefixed SANDBOX)"
        case .unknownApp: why = "is for an app that is not in the config's apps"
        case .appAppleIdMismatch: why = "has an appAppleId that is not the one configured for its bundle ID"
        case .bundleIdMismatch: why = "is the token of another app than bundleId names"
        case .createdInFuture: why = "was created further in the future than tokens.maxFutureSkewSeconds allows"
        case .invalidTokenType: why = "has a tokenType that is not 1 to 64 of A-Z, 0-9 and _"
        default: why = "was refused"
        }
        return "\(why) (\(rejection.reason.rawValue))"
    }
}
