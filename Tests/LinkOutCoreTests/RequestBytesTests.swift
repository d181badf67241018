import LinkOutTestSupport
import Testing

@testable import LinkOutCore

/// The byte-level helpers the request path uses instead of `String`: each checked against the obvious
/// byte-by-byte answer.
@Suite("Request bytes")
struct RequestBytesTests {
    typealias F = Fixtures

    @Test("ByteSearch finds the first occurrence at every offset and alignment, or the end")
    func byteSearch() {
        var generator = F.SplitMix64(seed: 31)
        for count in 0..<40 {
            // Few distinct values, so hits land everywhere, next to 0x00, 0x7F, 0x80 and 0xFF (borrows).
            let values: [UInt8] = [0x00, 0x25, 0x26, 0x7F, 0x80, 0xA6, 0xFF]
            let bytes = (0..<count).map { _ in values.randomElement(using: &generator)! }
            bytes.withUnsafeBytes { buffer in
                for needle in values + [0x3D] {
                    for from in 0...count {
                        for to in from...count {
                            let expected = bytes[from..<to].firstIndex(of: needle) ?? to
                            #expect(ByteSearch.firstIndex(of: needle, in: buffer, from: from, to: to) == expected)
                        }
                    }
                    #expect(ByteSearch.contains(needle, in: buffer) == bytes.contains(needle))
                }
            }
        }
    }

    @Test("ByteSearch.isASCII finds one byte from 0x80 anywhere")
    func isASCII() {
        for count in 0..<40 {
            let ascii = (0..<count).map { UInt8($0 % 0x80) }
            ascii.withUnsafeBytes { #expect(ByteSearch.isASCII($0)) }
            for position in 0..<count {
                for high: UInt8 in [0x80, 0xC3, 0xFF] {
                    var bytes = ascii
                    bytes[position] = high
                    bytes.withUnsafeBytes { #expect(!ByteSearch.isASCII($0), "\(count) \(position)") }
                }
            }
        }
    }

    /// A parameter as a query gives it.
    private enum Parameter: Equatable {
        case absent
        case malformed
        case value([UInt8])

        init(_ scanned: LinkOutQuery.Value??) {
            switch scanned {
            case .none: self = .malformed
            case .some(.none): self = .absent
            case .some(.some(let value)): self = .value(value.copied)
            }
        }
    }

    @Test("LinkOutQuery.scan and the values it hands out agree with the obvious split on '&' and '='")
    func queryScan() {
        var generator = F.SplitMix64(seed: 71)
        let pieces = [
            "externalPurchaseToken", "bundleId", "=", "&", "%3D", "%3d", "%", "%zz", "x", "bundleIdX", "bundleI",
            "externalPurchaseTokens", "com.example", "eyJhIjoxfQ", "+", "&&",
        ]
        for _ in 0..<5_000 {
            let query = (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let bytes = Array(query.utf8)
            // The obvious reading: pairs split on '&', a key up to its first '=', each name at most once.
            var token = Parameter.absent, bundleId = Parameter.absent, duplicate = false
            for pair in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
                let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
                let key = Array(pair[pair.startIndex..<equals])
                let value = equals < pair.endIndex ? Array(pair[(equals + 1)...]) : []
                let parameter = LinkOutQuery.percentDecode(value).map { Parameter.value($0) } ?? .malformed
                if key == Array("externalPurchaseToken".utf8) {
                    if token != .absent { duplicate = true }
                    token = parameter
                } else if key == Array("bundleId".utf8) {
                    if bundleId != .absent { duplicate = true }
                    bundleId = parameter
                }
            }
            bytes.withUnsafeBytes { raw in
                switch LinkOutQuery.scan(raw) {
                case .failure(let rejection):
                    #expect(duplicate && rejection == TokenRejection(.duplicateParameter), "\(query)")
                case .success(let positions):
                    #expect(!duplicate, "\(query)")
                    #expect(Parameter(positions.decodedToken(in: raw)) == token, "\(query)")
                    #expect(Parameter(positions.decodedBundleId(in: raw)) == bundleId, "\(query)")
                }
            }
        }
    }

    @Test("a target splits into path and query at the first '?', and a '#' ends both")
    func requestTarget() {
        let cases: [(target: String, path: String, query: String)] = [
            ("/nl", "/nl", ""),
            ("/nl?", "/nl", ""),
            ("/nl?a=1&b=2", "/nl", "a=1&b=2"),
            ("/nl?a=1?b=2", "/nl", "a=1?b=2"),
            ("/nl?a=1#top", "/nl", "a=1"),
            ("/nl#top?a=1", "/nl", ""),
            ("/nl#", "/nl", ""),
            ("?a=1", "", "a=1"),
            ("", "", ""),
            (
                "/a/very/long/path/over/eight/bytes?and=a&query=that&is=longer#and-a-fragment", "/a/very/long/path/over/eight/bytes",
                "and=a&query=that&is=longer"
            ),
        ]
        for (target, path, query) in cases {
            Array(target.utf8).withUnsafeBytes { bytes in
                let split = RequestTarget(bytes)
                #expect(Array(split.path) == Array(path.utf8), "\(target)")
                #expect(Array(split.query) == Array(query.utf8), "\(target)")
            }
        }
    }

    @Test("the route table finds every link's path byte for byte, and nothing else")
    func routeTable() {
        let paths = (0..<40).map { "/link\($0)" } + ["/", "/nl", "/NL/x", "/de/annual"]
        let routes = paths.enumerated().map { index, path in
            let link = Link(id: "l\(index)", path: path, country: "nl", destinations: [Destination(url: "https://x.example/\(index)")])
            let set = DestinationSet(
                entries: [DestinationSet.Entry(url: link.destinations[0].url, urlIndex: 0, health: nil)], weights: link.destinations)
            return Route(link: link, index: index, sets: ["nl": set], ownSet: set, experiment: nil, fallback: nil)
        }
        let table = RouteTable(routes)
        #expect(table.all.map(\.index) == Array(paths.indices))
        for (index, path) in paths.enumerated() {
            Array(path.utf8).withUnsafeBytes { #expect(table[$0]?.index == index) }
        }
        for other in ["", "/link", "/link40", "/nl/", "/Nl", "/nl ", "/de/Annual", "/healthz"] {
            Array(other.utf8).withUnsafeBytes { #expect(table[$0] == nil, "\(other)") }
        }
    }

    @Test("a path given twice keeps its later link, as a dictionary did")
    func duplicatePath() {
        let routes = [0, 1].map { index in
            let link = Link(id: "l\(index)", path: "/nl", country: "nl", destinations: [Destination(url: "https://x.example/\(index)")])
            let set = DestinationSet(
                entries: [DestinationSet.Entry(url: link.destinations[0].url, urlIndex: 0, health: nil)], weights: link.destinations)
            return Route(link: link, index: index, sets: ["nl": set], ownSet: set, experiment: nil, fallback: nil)
        }
        let table = RouteTable(routes)
        #expect(table.all.map(\.index) == [1])
        Array("/nl".utf8).withUnsafeBytes { #expect(table[$0]?.index == 1) }
    }

    @Test("the built-in paths are the reserved ones, matched exactly")
    func builtInPaths() {
        #expect(LinkPathRules.reserved == ["/healthz", "/readyz", "/favicon.ico", "/robots.txt"])
        for path in LinkPathRules.reserved {
            Array(path.utf8).withUnsafeBytes { #expect(BuiltInPath($0) != nil) }
        }
        for other in ["/healthz/", "/Healthz", "/ready", "/robots", "/"] {
            Array(other.utf8).withUnsafeBytes { #expect(BuiltInPath($0) == nil) }
        }
    }

    /// A gateway with one link on `/K`, and a valid token's query for it.
    private static let gateway = Gateway(
        config: GatewayConfig(
            apps: [AllowedApp(bundleId: AppleSampleToken.bundleId, appAppleId: AppleSampleToken.appAppleId)],
            links: [Link(id: "k", path: "/K", country: "nl", destinations: [Destination(url: "https://x.example/k")])]))
    private static let query = Array("?externalPurchaseToken=\(TokenBuilder.encoded(F.json()))&bundleId=\(AppleSampleToken.bundleId)".utf8)

    private func decide(path: [UInt8]) -> Decision {
        Self.gateway.decide(method: .get, target: path + Self.query, nowMs: AppleSampleToken.creationDate + 1_000)
    }

    @Test("a path is matched byte for byte, as LinkPathRules says: no Unicode equivalence")
    func byteForByte() throws {
        guard case .redirect(let redirect) = decide(path: Array("/K".utf8)) else {
            Issue.record("not a link-out")
            return
        }
        #expect(redirect.link == "k")
        // U+212A KELVIN SIGN is canonically equivalent to "K" as a Swift String, but not the same bytes.
        guard case .recordThenNotFound(let kelvin) = decide(path: Array("/\u{212A}".utf8)) else {
            Issue.record("not recorded")
            return
        }
        #expect(kelvin.record.link == Gateway.unroutedLink && kelvin.path == "/%E2%84%AA")
    }

    @Test("an unrouted path is kept as the bytes sent, even bytes that are not UTF-8")
    func unroutedBytes() throws {
        guard case .recordThenNotFound(let visit) = decide(path: Array("/a".utf8) + [0xFF, 0xC3]) else {
            Issue.record("not recorded")
            return
        }
        #expect(visit.path == "/a%FF%C3")
    }
}
