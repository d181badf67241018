/// The shoppers' listener's answers as `Reply` values: the redirect, the pages, the plain-text health
/// answers. Pure, so each answer's fields are written once and tested without a socket.
public enum ShopperReplies {
    /// 302 to the checkout. No cache (each token is single-use) and no referrer (the link holds the token).
    public static func redirect(location: String, reason: String?, access: ReplyAccess) -> Reply {
        var headers = [
            ReplyHeader("Location", location),
            ReplyHeader("Cache-Control", "no-store"),
            ReplyHeader("Referrer-Policy", "no-referrer"),
        ]
        if let reason { headers.append(ReplyHeader("X-Linkout-Reason", reason)) }
        return Reply(status: 302, headers: headers, access: access)
    }

    /// A page in the shopper's language, with the fields every page carries, then `extra`.
    public static func page(
        _ kind: PageKind, language: Int, catalog: PageCatalog, extra: [ReplyHeader] = [], access: ReplyAccess
    ) -> Reply {
        var headers = [
            ReplyHeader("Content-Type", "text/html; charset=utf-8"),
            ReplyHeader("Content-Language", ShopperLanguage.codes[language]),
            ReplyHeader("Vary", "Accept-Language"),
            ReplyHeader("Cache-Control", "no-store"),
            ReplyHeader("Referrer-Policy", "no-referrer"),
            ReplyHeader("X-Content-Type-Options", "nosniff"),
            ReplyHeader("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:"),
        ]
        headers += extra
        return Reply(status: kind.status, headers: headers, body: catalog.page(kind, language: language), access: access)
    }

    /// The page for a request the connection layer refused: its status (400, 413, 414, 431, 501, 505) with
    /// the damaged-link page and the reason, and the connection closes.
    public static func refusedHead(status: Int, reason: String?, language: Int, catalog: PageCatalog, access: ReplyAccess) -> Reply {
        var extra: [ReplyHeader] = []
        if let reason { extra.append(ReplyHeader("X-Linkout-Reason", reason)) }
        var reply = page(.damagedToken, language: language, catalog: catalog, extra: extra, access: access)
        reply.status = status
        reply.close = true
        return reply
    }

    public static func text(_ status: Int, _ text: String, extra: [ReplyHeader] = [], access: ReplyAccess) -> Reply {
        Reply(
            status: status,
            headers: [
                ReplyHeader("Content-Type", "text/plain; charset=utf-8"),
                ReplyHeader("Cache-Control", "no-store"),
            ] + extra, body: Array(text.utf8), access: access)
    }

    public static func json(_ status: Int, _ json: String, extra: [ReplyHeader] = [], access: ReplyAccess) -> Reply {
        Reply(
            status: status,
            headers: [
                ReplyHeader("Content-Type", "application/json"),
                ReplyHeader("Cache-Control", "no-store"),
            ] + extra, body: Array((json + "\n").utf8), access: access)
    }

    /// Browsers ask for it with every page: an empty answer they keep for a day, not the 404 page each time.
    public static let favicon = Reply(
        status: 204, headers: [ReplyHeader("Cache-Control", "public, max-age=86400")], access: ReplyAccess(route: "favicon"))

    /// Nothing here is for crawlers.
    public static let robots = Reply(
        status: 200,
        headers: [ReplyHeader("Content-Type", "text/plain; charset=utf-8"), ReplyHeader("Cache-Control", "public, max-age=86400")],
        body: Array("User-agent: *\nDisallow: /\n".utf8), access: ReplyAccess(route: "robots"))
}
