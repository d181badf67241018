// Runs one stage of the link-out request path N times, so callgrind can count its instructions:
// (instructions with N iterations - instructions with 0) / N is the stage's cost per request.
//
//   linkout-stages STAGE N
//
// Stages follow the request: parse (query), decode (base64 + JSON), validate, choose (destination and
// Location), handoff (record to the writer's queue), classify (shopper, prefetch or bot, from Safari's
// headers), decide (all of the core at once, with Safari's headers); and head, the strict HTTP/1.1 parse
// every request head goes through (`RequestHeadParser`, a Safari-like head, in one read).
import LinkOutCore
import LinkOutStore
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3, let iterations = Int(arguments[2]) else {
    print("usage: linkout-stages parse|decode|validate|choose|handoff|classify|decide|head N")
    exit(2)
}
let stage = arguments[1]

let link = Link(
    id: "nl", path: "/nl", country: "nl",
    destinations: [Destination(url: "https://checkout.example.com/nl", weight: 3), Destination(url: "https://checkout-b.example.com/nl", weight: 1)])
let config = GatewayConfig(apps: [AllowedApp(bundleId: "com.example", appAppleId: 1234567890)], links: [link])
let gateway = Gateway(config: config)
let now: Int64 = 1_795_000_000_000

// Distinct tokens, made before counting starts as a load generator would send them; always the same number,
// so the 0-iteration run builds exactly what the N-iteration run builds.
let tokenCount = 4096
let ids = (0..<tokenCount).map { index -> String in
    let hex = String(index, radix: 16)
    return "6a1e5e4c-1b5b-4f7e-9f0e-" + String(repeating: "0", count: 12 - hex.count) + hex
}
let tokens = ids.map {
    TokenMinter.mint(ExternalPurchaseToken(appAppleId: 1234567890, bundleId: "com.example", tokenCreationDate: now - 1000, externalPurchaseId: $0))
}
let targets = tokens.map { Array("/nl?externalPurchaseToken=\($0)&bundleId=com.example".utf8) }
let queries = targets.map { Array($0.dropFirst(4)) }
let tokenBytes = tokens.map { Array($0.utf8) }
let decoded = tokenBytes.map { bytes -> ExternalPurchaseToken in
    guard case .success(let token) = TokenDecoder.decode(bytes, maxLength: 4096) else { fatalError("fixture token refused") }
    return token
}
let validator = TokenValidator(policy: .defaults, apps: config.apps)
let chooser = DestinationChooser(destinations: link.destinations)
let templates = link.destinations.map { LocationTemplate(destination: $0.url) }
// The head as Safari on iOS sends it, with each token: the bytes the parser reads per request.
let heads = targets.map { target -> [UInt8] in
    Array("GET ".utf8) + target + Array((" HTTP/1.1\r\nHost: pay.example.com\r\n" +
        "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
        "Sec-Fetch-Site: none\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: document\r\n" +
        "User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 " +
        "(KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1\r\n" +
        "Accept-Language: nl-NL,nl;q=0.9\r\nAccept-Encoding: gzip, deflate, br\r\n" +
        "Priority: u=0, i\r\nConnection: keep-alive\r\n\r\n").utf8)
}
let safari = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
/// The headers the core asks for, as the server would answer for Safari on iOS.
struct SafariContext: RequestContext {
    func header(_ name: String) -> String? { name == "User-Agent" ? safari : nil }
    func peerAddress() -> String { "203.0.113.9" }
    func geoCountry() -> String? { nil }
}
let context = SafariContext()
let writer = RecordWriter<Int>(store: MemoryTokenStore(), maxPending: Int.max, clock: .system) { _, _ in }

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

var sink = 0
for iteration in 0..<iterations {
    let index = iteration % tokenCount
    switch stage {
    case "parse":
        queries[index].withUnsafeBytes { query in
            if case .success(let positions) = LinkOutQuery.scan(query), case .some(.some(let token)) = positions.decodedToken(in: query) {
                sink &+= token.count
            }
        }
    case "decode":
        tokenBytes[index].withUnsafeBytes { bytes in
            if case .success(let token) = TokenDecoder.decode(bytes, maxLength: 4096) { sink &+= Int(token.appAppleId) }
        }
    case "validate":
        if case .success(let accepted) = validator.validate(decoded[index], bundleIdParameter: "com.example", nowMs: now) {
            sink &+= accepted.stale ? 1 : 0
        }
    case "choose":
        let location = templates[chooser.choose(externalPurchaseId: ids[index])].location("externalPurchaseId=" + ids[index])
        sink &+= location.utf8.count
    case "handoff":
        let record = TokenRecord(token: decoded[index], link: link, destination: link.destinations[0].url, seenAt: now, stale: false)
        sink &+= writer.submit(.token(record), ticket: iteration) ? 1 : 0
    case "classify":
        sink &+= BotRules.defaults.kind(method: .get, purpose: nil, secPurpose: nil, userAgent: safari) == .shopper ? 1 : 0
    case "decide":
        let decision = targets[index].withUnsafeBytes { gateway.decide(method: .get, target: $0, nowMs: now, context: context) }
        blackHole(decision)
        sink &+= 1
    case "head":
        var parser = RequestHeadParser()
        heads[index].withUnsafeBytes {
            if case .head(let head) = parser.parse($0) { sink &+= head.headLength }
        }
    default:
        print("unknown stage \(stage)")
        exit(2)
    }
}
blackHole(sink)
