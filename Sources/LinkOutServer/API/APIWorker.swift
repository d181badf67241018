import Foundation
import LinkOutCore
import LinkOutStore

/// The API's store work, off its listener's loop: the loop checks the key and the rate and queues the
/// request here; this thread reads and stores what it carries (line items through `LineItemIntake`, tokens
/// through `TokenRegistrationIntake`, both on the API's own store connection, one request at a time, as the
/// store takes them) and hands the answer back to the loop. So the loop always answers, even while the
/// store is slow: a request that finds `maxQueued` waiting gets 503 with Retry-After at once, never a
/// connection that times out with nobody knowing whether it was applied.
final class APIWorker: @unchecked Sendable {
    /// What a request carries, by its path.
    enum Route: Sendable {
        case lineItems
        case tokens
    }

    /// The answer of the intake the request went to.
    enum Answer: Sendable {
        case lineItems(LineItemIntake.Answer)
        case tokens(TokenRegistrationIntake.Answer)

        var status: Int {
            switch self {
            case .lineItems(let answer): answer.status
            case .tokens(let answer): answer.status
            }
        }

        var body: String {
            switch self {
            case .lineItems(let answer): answer.body
            case .tokens(let answer): answer.body
            }
        }
    }

    struct Job {
        var route: Route
        var exchange: Exchange
        var body: [UInt8]
        /// The key's name, for the log.
        var keyName: String
    }

    private let lineItems: LineItemIntake
    private let registrations: TokenRegistrationIntake
    /// Called on this thread with each answer, to hand it to the loop.
    private let deliver: @Sendable (Job, Answer) -> Void
    private let queue: BoundedWorkQueue<Job>
    /// The time each request's lines and tokens are taken at.
    private let clock: TimeSource

    init(
        lineItems: LineItemIntake, registrations: TokenRegistrationIntake, maxQueued: Int, clock: TimeSource,
        deliver: @escaping @Sendable (Job, Answer) -> Void
    ) {
        self.lineItems = lineItems
        self.registrations = registrations
        self.clock = clock
        self.deliver = deliver
        queue = BoundedWorkQueue(name: "linkout-apiwork", maxQueued: maxQueued)
    }

    /// From the loop: false when `maxQueued` requests wait already, or when stopping.
    func submit(_ job: Job) -> Bool {
        queue.submit(job)
    }

    func start() {
        queue.start { [self] job in
            let now = clock.nowMs()
            switch job.route {
            case .lineItems: deliver(job, .lineItems(lineItems.submit(job.body, now: now)))
            case .tokens: deliver(job, .tokens(registrations.submit(job.body, now: now)))
            }
        }
    }

    /// After the loop stopped (it waits for the answers it owes): answers what is queued, then ends.
    func stop() {
        queue.stop()
    }
}
