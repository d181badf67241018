import LinkOutCore

/// `POST notifications.path` on the shoppers' listener: Apple's signed notifications, refused here as
/// cheaply as they can be, the rest parked for `NotificationIntake`. One per loop.
final class NotificationRoute: ShopperRoute {
    private let intake: NotificationIntake
    private let loop: Int
    private let bodyLimit: Int
    private let clock: TimeSource
    /// This loop's share of `notifications.rateLimit`, checked before a notification's body is decoded.
    @exclusivity(unchecked) private var limiter: RateLimiter?

    init(intake: NotificationIntake, loop: Int, loopCount: Int, clock: TimeSource) {
        self.intake = intake
        self.loop = loop
        self.clock = clock
        bodyLimit = Int(intake.settings.maxBodyBytes)
        limiter = RateLimiter.share(of: intake.settings.rateLimit, loops: loopCount)
    }

    var path: [UInt8] { Array(intake.settings.path.utf8) }

    func bodyLimit(for request: HTTPRequest) -> Int { bodyLimit }

    /// Over the client's rate (429), then whatever `screen` finds without a signature (400), then over
    /// what signature checks may cost (503), all here; the rest goes to the intake thread (503 when its
    /// queue is full), and the answer comes back through the loop's mailbox (`answer(_:)`). Anything but
    /// `POST` is 405.
    func respond(to request: HTTPRequest, exchange: Exchange, arrivedMs: Int64, on listener: ShopperListener) -> Reply? {
        guard request.method == .post else {
            return ShopperReplies.json(
                405, #"{"error":"use POST"}"#, extra: [ReplyHeader("Allow", "POST")],
                access: ReplyAccess(route: "notifications", reason: "method_not_allowed", count: .methodNotAllowed))
        }
        let client = listener.client(request)
        func refuse(_ refusal: NotificationRefusal, status: Int, retry: Bool) -> Reply {
            intake.refused(refusal, client: client, bytes: request.body.count)
            return ShopperReplies.json(
                status, #"{"error":"\#(refusal.reason.rawValue)"}"#, extra: retry ? [ReplyHeader("Retry-After", "1")] : [],
                access: ReplyAccess(route: "notifications", reason: refusal.reason.rawValue))
        }
        let nowMs = clock.monotonicMilliseconds()
        if limiter != nil, !limiter!.allow(client: client.utf8, atMs: nowMs) {
            return refuse(NotificationRefusal(.rateLimited, "over notifications.rateLimit"), status: 429, retry: true)
        }
        let screened: ScreenedNotification
        do throws(NotificationRefusal) {
            screened = try intake.verifier.screen(body: Array(request.body))
        } catch {
            return refuse(error, status: 400, retry: false)
        }
        if let refusal = intake.budgetRefusal(for: screened, atMs: nowMs) {
            return refuse(refusal, status: 503, retry: true)
        }
        guard !listener.isStopping,
            intake.submit(NotificationIntake.Job(loop: loop, exchange: exchange, screened: screened, client: client))
        else {
            return refuse(
                NotificationRefusal(.busy, listener.isStopping ? "stopping" : "the intake's queue is full"), status: 503, retry: true)
        }
        return nil
    }

    func bodyTooLarge(_ request: HTTPRequest, on listener: ShopperListener) {
        intake.refused(
            NotificationRefusal(.bodyTooLarge, "a body of \(request.head.contentLength) bytes, over notifications.maxBodyBytes"),
            client: listener.clientAddress(request), bytes: request.head.contentLength)
    }

    func bodyTooSlow(_ request: HTTPRequest, on listener: ShopperListener) {
        intake.refused(
            NotificationRefusal(.slowBody, "the body was not complete within notifications.bodyTimeoutSeconds of its head"),
            client: listener.clientAddress(request), bytes: request.head.contentLength)
    }

    /// The intake's answer as the loop sends it (made on the intake's thread).
    static func answer(_ reply: NotificationIntake.Reply) -> ParkedReply {
        ParkedReply(
            exchange: reply.exchange,
            reply: ShopperReplies.json(
                Int(reply.status), reply.json, access: ReplyAccess(route: "notifications", reason: reply.reason)))
    }
}
