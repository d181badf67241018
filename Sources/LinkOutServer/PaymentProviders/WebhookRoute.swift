import LinkOutCore

/// `POST` on a payment provider's webhook path of the shoppers' listener: the body and its signature
/// header go to `PaymentIntake`'s thread, and the answer comes back through the loop's mailbox
/// (`answer(_:provider:)`). Anything but `POST` is 405. One per provider and loop.
final class WebhookRoute: ShopperRoute {
    private let intake: PaymentIntake
    private let provider: PaymentProvider
    let path: [UInt8]
    private let bodyLimit: Int
    private let loop: Int
    private let route: String

    init(intake: PaymentIntake, provider: PaymentProviderSettings, loop: Int) {
        self.intake = intake
        self.provider = provider.provider
        path = Array(provider.path.utf8)
        bodyLimit = provider.maxBodyBytes
        self.loop = loop
        route = Self.route(provider.provider)
    }

    /// The access log's name for the provider's path.
    static func route(_ provider: PaymentProvider) -> String { "webhook_" + provider.rawValue }

    func bodyLimit(for request: HTTPRequest) -> Int { bodyLimit }

    func respond(to request: HTTPRequest, exchange: Exchange, arrivedMs: Int64, on listener: ShopperListener) -> Reply? {
        guard request.method == .post else {
            return ShopperReplies.json(
                405, #"{"error":"use POST"}"#, extra: [ReplyHeader("Allow", "POST")],
                access: ReplyAccess(route: route, reason: "method_not_allowed", count: .methodNotAllowed))
        }
        let signature = request.text(provider == .stripe ? request.head.stripeSignature : request.head.paddleSignature)
        guard !listener.isStopping,
            intake.submit(
                PaymentIntake.Job(
                    loop: loop, exchange: exchange, provider: provider, body: Array(request.body), signature: signature,
                    client: listener.client(request)))
        else {
            return ShopperReplies.json(
                503, #"{"error":"busy"}"#, extra: [ReplyHeader("Retry-After", "1")],
                access: ReplyAccess(route: route, reason: "busy"))
        }
        return nil
    }

    /// The intake's answer as the loop sends it (made on the intake's thread).
    static func answer(_ reply: PaymentIntake.Reply, provider: PaymentProvider) -> ParkedReply {
        ParkedReply(
            exchange: reply.exchange,
            reply: ShopperReplies.json(
                Int(reply.status), reply.json, access: ReplyAccess(route: route(provider), reason: reply.reason)))
    }
}
