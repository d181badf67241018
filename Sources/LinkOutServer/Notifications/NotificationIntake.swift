import CoreMetrics
import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// Apple's notifications, between the shoppers' loops and the store. A loop thread never waits on disk
/// (architecture.md), and verifying a chain costs a few milliseconds: so the loop that read a notification's
/// body parks the request and hands the body here; this thread verifies it, records it in its own
/// transaction on its own store connection, and posts the answer back to that loop's mailbox, whose eventfd
/// wakes it to reply, exactly as the writer's commits come back for redirects. Notifications are rare (a
/// few per token over its life), so one thread and a short queue are plenty; a full queue is a 503, which
/// Apple retries.
final class NotificationIntake: @unchecked Sendable {
    /// A parked request: which loop owns it, the request on its connection, the body.
    struct Job {
        var loop: Int
        var exchange: Exchange
        var body: [UInt8]
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
    private let verifier: NotificationVerifier
    private let store: any ReportingStore
    private let logger: Logger
    private let metrics: NotificationMetrics
    /// Hands a reply to the loop that owns the request (from this thread).
    private let deliver: @Sendable (Int, Reply) -> Void
    /// Tells the reporter there is work now.
    private let wakeReporter: @Sendable () -> Void

    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopping = false
    private let thread = WorkerThread(name: "linkout-notify")
    static let maxQueued = 64

    init(
        settings: NotificationSettings, verifier: NotificationVerifier, store: any ReportingStore, logger: Logger,
        metrics: NotificationMetrics, deliver: @escaping @Sendable (Int, Reply) -> Void, wakeReporter: @escaping @Sendable () -> Void
    ) {
        self.settings = settings
        self.verifier = verifier
        self.store = store
        self.logger = logger
        self.metrics = metrics
        self.deliver = deliver
        self.wakeReporter = wakeReporter
    }

    /// From a loop thread: false when the queue is full or stopping (then the loop answers 503 itself).
    func submit(_ job: Job) -> Bool {
        condition.withLock {
            guard !stopping, queue.count < Self.maxQueued else { return false }
            queue.append(job)
            condition.signal()
            return true
        }
    }

    func start() {
        thread.start { [self] in
            while let job = next() {
                deliver(job.loop, process(job))
            }
        }
    }

    /// After the loops stopped (each waits for its parked notifications): answers what is queued, then ends.
    func stop() {
        condition.withLock {
            stopping = true
            condition.signal()
        }
        thread.join()
    }

    private func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        return queue.isEmpty ? nil : queue.removeFirst()
    }

    /// Verifies, records, and says what to answer: 200 once stored, 400 for what fails verification, 503
    /// when the store fails (Apple retries; nothing was acted on).
    func process(_ job: Job) -> Reply {
        let verified: VerifiedNotification
        switch verify(job.body) {
        case .failure(let refusal):
            metrics.refusals[refusal.reason.rawValue]?.increment()
            logger.warning("notifications: refused a notification that failed verification", metadata: [
                "reason": "\(refusal.reason.rawValue)", "why": "\(refusal.detail)", "client": "\(job.client)", "bytes": "\(job.body.count)",
            ])
            return Reply(exchange: job.exchange, status: 400, json: #"{"error":"\#(refusal.reason.rawValue)"}"#, reason: refusal.reason.rawValue)
        case .success(let notification):
            verified = notification
        }
        var metadata: Logger.Metadata = [
            "notificationUUID": "\(verified.notificationUUID)", "type": "\(verified.notificationType)",
            "subtype": "\(verified.subtype ?? "")", "environment": "\(verified.environment.rawValue)",
        ]
        if let id = verified.token?.externalPurchaseId { metadata["externalPurchaseId"] = "\(id)" }
        let outcome: NotificationOutcome
        do {
            outcome = try store.recordNotification(verified, now: TimeSource.system.nowMs())
        } catch {
            metadata["error"] = "\(error)"
            logger.error("notifications: cannot store a notification; answering 503 so that Apple retries", metadata: metadata)
            return Reply(exchange: job.exchange, status: 503, json: #"{"error":"store_unavailable"}"#, reason: "store_unavailable")
        }
        metrics.outcomes[outcome]?.increment()
        metadata["outcome"] = "\(outcome.rawValue)"
        switch outcome {
        case .reportDue, .reportBlocked:
            // Apple's day-10 reminder came before linkout's report: the window or the reporter is wrong.
            metrics.reminded.increment()
            logger.warning("notifications: Apple reminded of a token linkout has not reported yet; reporting it now. Check reporting.noPurchaseAfterHours and the reporter", metadata: metadata)
        case .unrecognized:
            logger.notice("notifications: Apple named a token linkout never saw; reporting it UNRECOGNIZED_TOKEN", metadata: metadata)
        case .duplicate:
            logger.info("notifications: a notification already taken (Apple's retry)", metadata: metadata)
        default:
            logger.info("notifications: notification stored", metadata: metadata)
        }
        if [.reportDue, .unrecognized, .tokenRecorded].contains(outcome) { wakeReporter() }
        return Reply(exchange: job.exchange, status: 200, json: #"{"outcome":"\#(outcome.rawValue)"}"#, reason: outcome.rawValue)
    }

    /// swift-certificates' chain building is async; this thread is a plain thread that may wait, so it
    /// waits for the task here.
    private func verify(_ body: [UInt8]) -> Result<VerifiedNotification, NotificationRefusal> {
        final class Box: @unchecked Sendable { var result: Result<VerifiedNotification, NotificationRefusal>? }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let verifier = verifier
        Task {
            do throws(NotificationRefusal) {
                box.result = .success(try await verifier.verify(body: body))
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return box.result!
    }
}
