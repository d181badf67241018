import CoreMetrics
import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// Apple's notifications, between the shoppers' loops and the store. A loop thread never waits on disk
/// (architecture.md), and verifying a chain's signatures costs most of a millisecond: so the loop that read
/// a notification's body screens it (`NotificationVerifier.screen`: everything that needs no signature,
/// and the chain's cached verdict), answers what fails at once, and hands the rest here, parked; this
/// thread verifies the signatures, records the notification in its own transaction on its own store
/// connection, and posts the answer back to that loop's mailbox, whose eventfd wakes it to reply, exactly as
/// the writer's commits come back for redirects. Notifications are rare (a few per token over its life), so
/// one thread and a short queue are plenty; a full queue is a 503, which Apple retries.
///
/// Every refusal on the path, whichever thread makes it, is counted here (`refused`) and logged at most
/// once per minute per reason and client.
final class NotificationIntake: @unchecked Sendable {
    /// A parked request: which loop owns it, the request on its connection, what the loop screened.
    struct Job {
        var loop: Int
        var exchange: Exchange
        var screened: ScreenedNotification
        var client: String
    }

    /// The answer for the owning loop to send.
    struct Reply {
        var exchange: Exchange
        var status: Int32
        var json: String
        /// The refusal's reason or the outcome, for the access log.
        var reason: String
    }

    let settings: NotificationSettings
    /// Shared with the loops, which screen with it (its verdict cache is shared too).
    let verifier: NotificationVerifier
    private let refusalLog: RefusalLog
    private let store: any NotificationStore
    private let logger: Logger
    private let metrics: NotificationMetrics
    /// Hands a reply to the loop that owns the request (from this thread).
    private let deliver: @Sendable (Int, Reply) -> Void
    /// Records a verified notification and acts on it, as the history fetcher does.
    private let taker: NotificationTaker

    /// What checking signatures may cost, all loops together (`verificationsPerSecond`, `newChainsPerSecond`):
    /// one bucket each (a RateLimiter with one slot), taken by the loops before they queue a notification.
    private struct Budgets {
        var verifications: RateLimiter
        var newChains: RateLimiter
        /// Chains queued and not yet checked, with how many notifications wait on each: a burst signed with
        /// one chain Apple has not shown since the start (its retries after an outage) takes from
        /// `newChains` once, not once per notification, since the first check's verdict serves the rest.
        var pending: [ScreenedNotification.PendingChain: Int] = [:]
    }
    private let budgets: Locked<Budgets>
    private static let everyone = Array("all clients".utf8)

    private let queue: BoundedWorkQueue<Job>

    init(
        settings: NotificationSettings, verifier: NotificationVerifier, store: any NotificationStore, logger: Logger,
        metrics: NotificationMetrics, deliver: @escaping @Sendable (Int, Reply) -> Void, wakeReporter: @escaping @Sendable () -> Void,
        clock: TimeSource
    ) {
        self.settings = settings
        self.verifier = verifier
        self.store = store
        self.logger = logger
        self.metrics = metrics
        self.refusalLog = RefusalLog(logger: logger, subject: "notifications", clock: clock)
        self.budgets = Locked(
            Budgets(
                verifications: RateLimiter(
                    policy: RateLimiter.Policy(
                        ratePerSecond: settings.verificationsPerSecond, burst: max(1, settings.verificationsPerSecond * 2)), slots: 1),
                newChains: RateLimiter(
                    policy: RateLimiter.Policy(ratePerSecond: settings.newChainsPerSecond, burst: max(1, settings.newChainsPerSecond * 2)),
                    slots: 1)))
        self.deliver = deliver
        self.taker = NotificationTaker(logger: logger, metrics: metrics, wakeReporter: wakeReporter, clock: clock)
        queue = BoundedWorkQueue(name: "linkout-notify", maxQueued: settings.maxQueued)
    }

    /// Counts a refusal and logs it if a line is due (from any thread).
    func refused(_ refusal: NotificationRefusal, client: String, bytes: Int) {
        metrics.refusals[refusal.reason.rawValue]?.increment()
        refusalLog.note(
            reason: refusal.reason.rawValue, client: client, "refused a notification",
            metadata: ["why": "\(refusal.detail)", "bytes": "\(bytes)"])
    }

    /// From a loop thread, before queueing: takes the notification's share of the budgets, or says which is
    /// spent (then the loop answers 503 itself). A chain not seen before takes from both, once for all the notifications queued with it.
    /// `atMs` is on the monotonic clock, as every rate limit is.
    func budgetRefusal(for screened: ScreenedNotification, atMs nowMs: Int64) -> NotificationRefusal? {
        budgets.withLock { budgets in
            if let chain = screened.pendingChain, budgets.pending[chain] == nil,
                !budgets.newChains.allow(client: Self.everyone, atMs: nowMs)
            {
                return NotificationRefusal(.newChainsLimited, "over notifications.newChainsPerSecond: a chain not seen before")
            }
            if !budgets.verifications.allow(client: Self.everyone, atMs: nowMs) {
                return NotificationRefusal(.verificationsLimited, "over notifications.verificationsPerSecond")
            }
            return nil
        }
    }

    /// From a loop thread: false when the queue is full or stopping (then the loop answers 503 itself).
    func submit(_ job: Job) -> Bool {
        // Counted before it is queued, so the intake thread's count-down after its check never comes first.
        if let chain = job.screened.pendingChain { budgets.withLock { $0.pending[chain, default: 0] += 1 } }
        guard queue.submit(job) else {
            if let chain = job.screened.pendingChain { release(chain) }
            return false
        }
        return true
    }

    /// One notification fewer waits on `chain`'s check.
    private func release(_ chain: ScreenedNotification.PendingChain) {
        budgets.withLock { budgets in
            let left = (budgets.pending[chain] ?? 1) - 1
            budgets.pending[chain] = left > 0 ? left : nil
        }
    }

    func start() {
        queue.start { [self] job in deliver(job.loop, process(job)) }
    }

    /// After the loops stopped (each waits for its parked notifications): answers what is queued, then ends.
    func stop() {
        queue.stop()
    }

    /// Verifies, records, and says what to answer: 200 once stored, 400 for what fails verification, 503
    /// when the store fails (Apple retries; nothing was acted on).
    func process(_ job: Job) -> Reply {
        defer {
            // Its chain's verdict is cached by now, whatever it was.
            if let chain = job.screened.pendingChain { release(chain) }
        }
        let verified: VerifiedNotification
        let checked = verifier.verifyWaiting(job.screened)
        if checked.chainChecked { metrics.chainsVerified.increment() }
        switch checked.result {
        case .failure(let refusal):
            refused(refusal, client: job.client, bytes: job.screened.signedBytes)
            return Reply(
                exchange: job.exchange, status: 400, json: #"{"error":"\#(refusal.reason.rawValue)"}"#, reason: refusal.reason.rawValue)
        case .success(let notification):
            verified = notification
        }
        let outcome: NotificationOutcome
        do {
            outcome = try taker.take(verified, store: store, from: "Apple")
        } catch {
            logger.error(
                "notifications: cannot store a notification; answering 503 so that Apple retries",
                metadata: NotificationTaker.metadata(verified, error: error))
            return Reply(exchange: job.exchange, status: 503, json: #"{"error":"store_unavailable"}"#, reason: "store_unavailable")
        }
        return Reply(exchange: job.exchange, status: 200, json: #"{"outcome":"\#(outcome.rawValue)"}"#, reason: outcome.rawValue)
    }
}

extension NotificationIntake: ServerPart {
    var partName: String { "Apple's notifications" }
}
