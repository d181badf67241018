import Foundation
import LinkOutTestSupport
import Testing

/// The connection layer's HTTP/1.1 behaviour against the real binary: keep-alive and `Connection: close`,
/// HTTP/1.0, answers in request order when a later one is ready first, a body read on the one route that
/// takes one, and the fields every answer carries.
@Suite struct ConnectionTests {
    static let links = #"[{ "id": "nl", "path": "/nl", "country": "nl", "destinations": [{ "url": "https://a.example.com/" }] }]"#

    @Test func keepAliveCloseAndHTTP10() throws {
        let folder = TemporaryFolder()
        let server = try GatewayProcess(
            config: folder.write("config.json", TestConfig.json(links: Self.links)), store: folder.file("store.sqlite"))

        // HTTP/1.1 keeps the connection open: three requests on one.
        let kept = try HTTPConnection(port: server.port)
        for _ in 0..<3 {
            let answer = try kept.request("GET", "/healthz")
            #expect(answer.status == 200)
            #expect(answer[header: "Connection"] == nil)
            #expect(answer[header: "Date"]?.hasSuffix(" GMT") == true)
            #expect(answer[header: "Content-Length"] == "3")
        }

        // `Connection: close`: answered, said, then closed.
        let closing = try HTTPConnection(port: server.port)
        try closing.sendRaw("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let closed = try closing.readResponse()
        #expect(closed.status == 200)
        #expect(closed[header: "Connection"] == "close")
        #expect(closing.isClosedByPeer())

        // HTTP/1.0 closes unless it asks to keep the connection, and then it is told so.
        let old = try HTTPConnection(port: server.port)
        try old.sendRaw("GET /healthz HTTP/1.0\r\n\r\n")
        #expect(try old.readResponse()[header: "Connection"] == "close")
        #expect(old.isClosedByPeer())
        let oldKept = try HTTPConnection(port: server.port)
        try oldKept.sendRaw("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try oldKept.readResponse()[header: "Connection"] == "keep-alive")
        try oldKept.sendRaw("GET /readyz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try oldKept.readResponse().status == 200)
        #expect(server.stop() == 0)
    }

    /// RFC 9112 §3.2.2: a server must accept the absolute-form a client sends to a proxy. Its path and
    /// query are the request's, whatever host it names (as with Host, no answer depends on it): the same
    /// 302 as origin-form, the visit recorded once. A scheme other than http(s), user info or no host is
    /// refused with its reason, and nothing of it is recorded.
    @Test func absoluteFormTargetsAreServedByTheirPath() throws {
        let folder = TemporaryFolder()
        let server = try GatewayProcess(
            config: folder.write("config.json", TestConfig.json(links: Self.links)), store: folder.file("store.sqlite"))
        let id = "a1b2c3d4-0000-4000-8000-0000000000ab"
        let link = TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: id))
        for target in ["http://evil.example" + link, "HTTPS://shop.example:8443" + link] {
            let connection = try HTTPConnection(port: server.port)
            try connection.sendRaw("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
            let answer = try connection.readResponse()
            #expect(answer.status == 302, "\(target)")
            #expect(answer[header: "Location"]?.hasPrefix("https://a.example.com/") == true)
        }
        let health = try HTTPConnection(port: server.port)
        try health.sendRaw("GET http://x/healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try health.readResponse().status == 200)
        let refusedId = "b1b2c3d4-0000-4000-8000-0000000000ab"
        let refusedLink = TokenBuilder.linkOut("/nl", token: TokenBuilder.minted(id: refusedId))
        for target in [
            "ftp://evil.example" + refusedLink, "http://user@evil.example" + refusedLink, "http://" + refusedLink, "http:" + refusedLink,
        ] {
            let connection = try HTTPConnection(port: server.port)
            try connection.sendRaw("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
            let answer = try connection.readResponse()
            #expect(answer.status == 400, "\(target)")
            #expect(answer[header: "X-Linkout-Reason"] == "unsupported_target_form", "\(target)")
        }
        #expect(server.stop() == 0)
        let tokens = try exportTokens(store: server.storePath)
        #expect(tokens.map { $0["externalPurchaseId"] as? String } == [id])
        #expect(tokens.first?["hits"] as? Int == 2)
    }

    /// A refused head was never read, so its page cannot follow its Accept-Language: English, not the first
    /// language of the catalogue (it was Bulgarian).
    @Test func aRefusedHeadsPageIsInEnglish() throws {
        let folder = TemporaryFolder()
        let server = try GatewayProcess(
            config: folder.write("config.json", TestConfig.json(links: Self.links)), store: folder.file("store.sqlite"))
        for raw in ["GET /readyz HTTP/1.1\r\nAccept-Language: nl\r\n\r\n", "GET /nl HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n"] {
            let connection = try HTTPConnection(port: server.port)
            try connection.sendRaw(raw)
            let answer = try connection.readResponse()
            #expect(answer.status == 400)
            #expect(answer[header: "Content-Language"] == "en", "\(raw.debugDescription)")
        }
        #expect(server.stop() == 0)
    }

    /// A link-out's 302 waits for its commit; the health check pipelined behind it is ready at once, yet
    /// leaves second. Ten such pairs in one send, each link-out a new token.
    @Test func answersLeaveInRequestOrder() throws {
        let folder = TemporaryFolder()
        let server = try GatewayProcess(
            config: folder.write("config.json", TestConfig.json(links: Self.links)), store: folder.file("store.sqlite"))
        let connection = try HTTPConnection(port: server.port)
        var bytes = ""
        for _ in 0..<10 {
            bytes += "GET \(TokenBuilder.linkOut("/nl", token: TokenBuilder.minted())) HTTP/1.1\r\nHost: x\r\n\r\n"
            bytes += "GET /nothing-here HTTP/1.1\r\nHost: x\r\n\r\n"
        }
        try connection.sendRaw(bytes)
        for _ in 0..<10 {
            #expect(try connection.readResponse().status == 302)
            #expect(try connection.readResponse().status == 404)
        }
        #expect(server.stop() == 0)
        #expect(try exportTokens(store: server.storePath).count == 10)
    }
}
