// libFuzzer target: a request target (`/nl?externalPurchaseToken=…&bundleId=…`), through the query
// scanner alone and through the whole Gateway.decide with a small fixed config. A redirect must go to a
// configured destination and its Location must be printable ASCII without spaces, quotes, backslashes or
// a second `#`: nothing from the request may bend the header or the URL, pass-through parameters
// included (the `fr` link copies `utm_*` and `ref` from the request).
import FuzzDriver
import LinkOutCore

private let nowMs: Int64 = 1_706_169_660_000  // a minute after Apple's sample token was made

private let config = GatewayConfig(
    tokens: TokenPolicy(maxLength: 4096, maxFutureSkewMs: 300_000, staleAfterMs: 3_600_000),
    apps: [
        AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890),
        AllowedApp(bundleId: "com.example.b", appAppleId: 42),
    ],
    links: [
        Link(id: "nl", path: "/nl", country: "nl", destinations: [
            Destination(url: "https://checkout.example.com/nl", weight: 3),
            Destination(url: "https://checkout-b.example.com/nl", weight: 1),
        ]),
        Link(id: "at", path: "/at", country: "at", destinations: [
            Destination(url: "https://checkout.example.com/at?plan=annual"),
        ]),
        Link(id: "de", path: "/de/annual", country: "de", destinations: [
            Destination(url: "https://checkout.example.com:8443/de?"),
        ], onInvalidToken: .redirect),
        Link(id: "fr", path: "/fr", country: "fr", destinations: [
            Destination(url: "https://checkout.example.com/fr#pay", weight: 1),
            Destination(url: "https://checkout.example.com/fr-b?utm_source=app", weight: 2),
        ], onInvalidToken: .redirect, forwardToken: true, countries: [CountryDestinations(country: "be")],
        parameters: passing),
    ])

private let passing: CheckoutParameters = {
    var parameters = CheckoutParameters()
    parameters.country = true
    parameters.link = true
    parameters.passThrough = [ParameterPattern("utm_*")!, ParameterPattern("ref")!]
    return parameters
}()

private let gateway = Gateway(config: config)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // The scanner alone, on the whole input as if it were a query.
    if case .success(let query) = LinkOutQuery.parse(bytes) {
        if let token = query.token, token.count > bytes.count { fatalError("fuzz-query: token longer than the query") }
        if let bundleId = query.bundleId, bundleId.count > bytes.count { fatalError("fuzz-query: bundleId longer than the query") }
    }

    let decision = gateway.decide(method: .get, target: bytes, nowMs: nowMs)
    check(decision, target: bytes)
    // HEAD answers like GET and records a visit of kind head.
    let head = gateway.decide(method: .head, target: bytes, nowMs: nowMs)
    switch (decision, head) {
    case (.redirect(let get), .redirect(let headRedirect)):
        if get.location != headRedirect.location { fatalError("fuzz-query: HEAD and GET redirect to different places") }
        if headRedirect.kind != .head || get.kind != .shopper { fatalError("fuzz-query: HEAD or GET has the wrong kind") }
    case (.redirect, _), (_, .redirect):
        fatalError("fuzz-query: GET and HEAD disagree on whether to redirect")
    case (.recordThenNotFound(let get), .recordThenNotFound(let headVisit)):
        if headVisit.kind != .head || get.kind != .shopper || get.path != headVisit.path { fatalError("fuzz-query: HEAD and GET record an unrouted token differently") }
    case (.recordThenNotFound, _), (_, .recordThenNotFound):
        fatalError("fuzz-query: GET and HEAD disagree on whether to record an unrouted token")
    default:
        break
    }
    return 0
}

private func check(_ decision: Decision, target: [UInt8]) {
    /// An unrouted token: its path is kept printable, bounded, and it is recorded for no link.
    func checkUnrouted(_ path: String, _ record: VisitRecord) {
        if path.utf8.count > UnroutedPath.maxBytes || path.utf8.contains(where: { $0 < 0x21 || $0 > 0x7E }) {
            fatalError("fuzz-query: an unrouted path is kept unsanitised: \(path.debugDescription)")
        }
        guard case .token(let token) = record, token.link == Gateway.unroutedLink, token.path == path else {
            fatalError("fuzz-query: an unrouted token is not recorded as link unrouted with its path")
        }
    }
    if case .recordThenNotFound(let visit) = decision {
        checkUnrouted(visit.path, .token(visit.record))
        return
    }
    guard case .redirect(let redirect) = decision else { return }
    if let path = redirect.unroutedPath { checkUnrouted(path, redirect.record) }
    let location = Array(redirect.location.utf8)
    for byte in location where byte < 0x21 || byte > 0x7E || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
        fatalError("fuzz-query: Location holds byte 0x\(String(byte, radix: 16)): \(redirect.location.debugDescription)")
    }
    if location.filter({ $0 == UInt8(ascii: "#") }).count > 1 {
        fatalError("fuzz-query: Location holds a second '#': \(redirect.location.debugDescription)")
    }
    guard config.links.indices.contains(redirect.linkIndex) else {
        fatalError("fuzz-query: redirect names link index \(redirect.linkIndex), which does not exist")
    }
    let link = config.links[redirect.linkIndex]
    guard link.destinationURLs.indices.contains(redirect.destinationIndex) else {
        fatalError("fuzz-query: redirect names destination \(redirect.destinationIndex) of link \(link.id), which does not exist")
    }
    // The Location is the destination with parameters inserted before its fragment (if any): it must
    // start with the destination up to the fragment, and end with the fragment.
    let starts = config.links.flatMap(\.destinations).contains { destination in
        let url = Array(destination.url.utf8)
        let hash = url.firstIndex(of: UInt8(ascii: "#")) ?? url.count
        return location.starts(with: url[..<hash]) && location.reversed().starts(with: url[hash...].reversed())
    }
    if !starts {
        fatalError("fuzz-query: Location does not start with a configured destination: \(redirect.location.debugDescription)")
    }
    let destination = link.destinationURLs[redirect.destinationIndex]
    let hash = destination.utf8.firstIndex(of: UInt8(ascii: "#")) ?? destination.utf8.endIndex
    if !location.starts(with: destination.utf8[..<hash]) {
        fatalError("fuzz-query: Location is not the destination the redirect names: \(redirect.location.debugDescription)")
    }
    if case .token(let record) = redirect.record {
        if !ExternalPurchaseID.isValid(record.externalPurchaseId) {
            fatalError("fuzz-query: a record carries an invalid externalPurchaseId")
        }
        if !redirect.location.contains("externalPurchaseId=" + record.externalPurchaseId) {
            fatalError("fuzz-query: the Location does not carry the record's externalPurchaseId")
        }
    }
    // A tokened redirect's Location must not carry any request byte beyond the validated id and token:
    // the target's path must never appear after the host.
    _ = target
}

// The entry point SwiftPM's link line names; libFuzzer's driver takes over from there (FuzzDriver).
@_cdecl("fuzz_query_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}
