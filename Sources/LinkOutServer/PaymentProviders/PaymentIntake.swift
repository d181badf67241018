import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// The payment providers' webhooks, between the shoppers' loops and the store, as Apple's notifications
/// (`NotificationIntake`): the loop that read a webhook's body parks the request and hands it here with its
/// signature header; this thread checks the signature over the bytes received, reads the event, takes it in
/// one transaction on its own store connection (`ProviderEventApplier`), and posts the answer back to the
/// loop's mailbox. No shopper waits on a webhook. When idle, it tries parked and waiting events again once
/// a minute (`ProviderEventApplier.sweep`).
final class PaymentIntake: @unchecked Sendable {
    struct Job {
        var loop: Int
        var exchange: Exchange
        var provider: PaymentProvider
        var body: [UInt8]
        var signature: String?
        var client: String
    }

    typealias Reply = NotificationIntake.Reply

    let settings: PaymentProvidersSettings
    private let applier: ProviderEventApplier
    private let store: any ProviderLedgerStore
    private let logger: Logger
    /// Refusals come from anyone who can reach the shoppers' listener: logged at most once a minute per reason and client.
    private let refusals: RefusalLog
    private let metrics: PaymentProviderMetrics
    private let deliver: @Sendable (Int, PaymentProvider, Reply) -> Void
    private let wakeReporter: @Sendable () -> Void
    /// The time of day for the signatures' tolerance and the ledger; the monotonic side spaces the sweeps.
    private let clock: TimeSource

    private let queue = BoundedWorkQueue<Job>(name: "linkout-psp", maxQueued: PaymentIntake.maxQueued)
    static let maxQueued = 64
    static let sweepSeconds: TimeInterval = 60

    init(
        settings: PaymentProvidersSettings, store: any ProviderLedgerStore, logger: Logger, metrics: PaymentProviderMetrics,
        deliver: @escaping @Sendable (Int, PaymentProvider, Reply) -> Void, wakeReporter: @escaping @Sendable () -> Void,
        clock: TimeSource
    ) {
        self.settings = settings
        self.applier = ProviderEventApplier(settings: settings)
        self.store = store
        self.logger = logger
        refusals = RefusalLog(logger: logger, subject: "payment providers", clock: clock)
        self.metrics = metrics
        self.deliver = deliver
        self.wakeReporter = wakeReporter
        self.clock = clock
    }

    /// From a loop thread: false when the queue is full or stopping (then the loop answers 503 itself).
    func submit(_ job: Job) -> Bool {
        queue.submit(job)
    }

    func start() {
        queue.start(sweepingEvery: Self.sweepSeconds, clock: clock, sweep: { [self] in sweep() }) { [self] job in
            deliver(job.loop, job.provider, process(job))
        }
    }

    /// After the loops stopped: answers what is queued, then ends.
    func stop() {
        queue.stop()
    }

    /// Verifies, takes, and says what to answer: 200 once the event is committed (taken, ignored, parked,
    /// held, unmatched or a duplicate: the provider stops sending it), 400 for a bad or stale signature or a
    /// malformed event (nothing stored), 503 when the store fails (the provider retries).
    func process(_ job: Job) -> Reply {
        let provider = job.provider
        func refuse(_ reason: String, _ why: String) -> Reply {
            metrics.refused(provider, reason)
            // On the public listener: a line a minute per reason and client, each one counted.
            refusals.note(
                reason: reason, client: job.client, "refused a webhook",
                metadata: [
                    "provider": "\(provider.rawValue)", "why": "\(why)", "bytes": "\(job.body.count)",
                ])
            return Reply(
                exchange: job.exchange, status: 400,
                json: JSONValue.object([
                    .init(key: "error", value: .string(reason)), .init(key: "message", value: .string(why)),
                ]).text, reason: reason)
        }
        guard let settings = settings[provider] else { return refuse("malformed_event", "no such provider") }
        switch ProviderSignature.verify(
            header: job.signature, body: job.body, secrets: settings.secrets, provider: provider, now: clock.nowMs() / 1000,
            toleranceSeconds: settings.toleranceSeconds)
        {
        case .failure(let problem):
            let why =
                switch problem {
                case .missing: "no \(provider.signatureHeader) header"
                case .malformed: "the \(provider.signatureHeader) header has no timestamp or no signature linkout checks"
                case .mismatch: "no signature matches any of the endpoint's signing secrets"
                case .stale:
                    "the signature's timestamp is more than \(settings.toleranceSeconds) s from this machine's clock (a replay, or a clock off)"
                }
            return refuse(problem.rawValue, why)
        case .success: break
        }
        let event: ProviderEvent
        switch ProviderEventApplier.read(job.body, provider: provider) {
        case .failure(let error): return refuse("malformed_event", error.message)
        case .success(let read): event = read
        }
        var metadata: Logger.Metadata = [
            "provider": "\(provider.rawValue)", "eventId": "\(event.eventId)", "type": "\(event.type)", "object": "\(event.objectId)",
        ]
        let now = clock.nowMs()
        let taken: (ProviderEventApplier.Result, freed: [ProviderEventRecord: ProviderEventApplier.Result])
        do {
            taken = try store.withProviderLedger { try applier.take(event, body: job.body, ledger: $0, now: now) }
        } catch {
            metadata["error"] = "\(error)"
            logger.error("payment providers: cannot store an event; answering 503 so that the provider retries", metadata: metadata)
            return Reply(exchange: job.exchange, status: 503, json: #"{"error":"store_unavailable"}"#, reason: "store_unavailable")
        }
        report(taken.0, provider: provider, metadata: metadata)
        for (record, result) in taken.freed {
            report(
                result, provider: provider,
                metadata: [
                    "provider": "\(provider.rawValue)", "eventId": "\(record.eventId)", "type": "\(record.type)",
                    "object": "\(record.objectId)",
                    "freedBy": "\(event.eventId)",
                ])
        }
        if taken.0.changed || taken.freed.values.contains(where: \.changed) { wakeReporter() }
        var answer: [JSONValue.Member] = [.init(key: "outcome", value: .string(taken.0.outcome.rawValue))]
        if let problem = taken.0.problem { answer.append(.init(key: "reason", value: .string(problem))) }
        return Reply(exchange: job.exchange, status: 200, json: JSONValue.object(answer).text, reason: taken.0.outcome.rawValue)
    }

    /// Counts and logs what became of an event: parked, held and waiting ones say why, at notice or warning.
    private func report(_ result: ProviderEventApplier.Result, provider: PaymentProvider, metadata: Logger.Metadata) {
        metrics.count(provider, result.outcome)
        var metadata = metadata
        metadata["outcome"] = "\(result.outcome.rawValue)"
        if let id = result.externalPurchaseId { metadata["externalPurchaseId"] = "\(id)" }
        if let waiting = result.waitingFor { metadata["waitingFor"] = "\(waiting)" }
        if let problem = result.problem { metadata["why"] = "\(problem)" }
        switch result.outcome {
        case .held: logger.warning("payment providers: an event is held for review, nothing of it goes to Apple", metadata: metadata)
        case .waiting: logger.warning("payment providers: an event's line cannot be made yet", metadata: metadata)
        case .parked: logger.notice("payment providers: an event is parked until what it names arrives", metadata: metadata)
        case .unmatched: logger.info("payment providers: an event about a payment that did not come through linkout", metadata: metadata)
        case .duplicate: logger.info("payment providers: an event already taken (the provider's retry)", metadata: metadata)
        case .taken, .ignored: logger.info("payment providers: event taken", metadata: metadata)
        }
    }

    /// Parked and waiting events tried again; what changed is counted and logged.
    private func sweep() {
        do {
            let results = try store.withProviderLedger { try applier.sweep(ledger: $0, now: clock.nowMs()) }
            for (record, result) in results {
                report(
                    result, provider: record.provider,
                    metadata: [
                        "provider": "\(record.provider.rawValue)", "eventId": "\(record.eventId)", "type": "\(record.type)",
                        "object": "\(record.objectId)",
                    ])
            }
            if results.values.contains(where: \.changed) { wakeReporter() }
        } catch {
            logger.error("payment providers: cannot try parked events again", metadata: ["error": "\(error)"])
        }
    }
}

extension PaymentIntake: ServerPart {
    var partName: String { "the payment providers' webhooks" }
}
