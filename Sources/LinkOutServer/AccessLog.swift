import Foundation
import LinkOutCore
import Logging

/// The access log: loop threads queue an `AccessRecord` (a lock and an append) and one thread writes them
/// as JSON lines through swift-log, a batch per write, so no loop thread waits on a file or a pipe.
///
/// The queue is bounded: when the writer falls behind (a blocked stdout, a full disk), records are
/// dropped and counted rather than held without limit; the count is logged when writing resumes.
final class AccessLog: @unchecked Sendable {
    private let logger: Logger
    /// The operator log: where to say that access records were dropped (the access log's own
    /// destination is the one that is stuck).
    private let operatorLogger: Logger
    private let sink: LogSink
    private let clients: ClientAddressPolicy
    private let condition = NSCondition()
    private var queue: [AccessRecord] = []
    private var dropped = 0
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    private let capacity = 100_000

    init(sink: LogSink, clients: ClientAddressPolicy, operatorLogger: Logger) {
        self.sink = sink
        self.operatorLogger = operatorLogger
        self.clients = clients
        self.logger = Logger(label: "linkout.access") { label in JSONLinesLogHandler(label: label, sink: sink) }
    }

    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "linkout-access-log"
        thread.start()
    }

    /// Called from loop threads.
    func record(_ record: AccessRecord) {
        condition.lock()
        if queue.count < capacity {
            queue.append(record)
        } else {
            dropped += 1
        }
        condition.unlock()
    }

    /// Opens a file destination again, for log rotation.
    func reopen() {
        do {
            try sink.reopen()
        } catch {
            operatorLogger.error("cannot reopen the access log; still writing to the old file", metadata: ["error": "\(error)"])
        }
    }

    /// Writes what is queued and stops.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
        finished.wait()
    }

    private func run() {
        while true {
            condition.lock()
            // A short nap between batches: one write per batch instead of one per request.
            if !stopping { _ = condition.wait(until: Date(timeIntervalSinceNow: 0.05)) }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            let lost = dropped
            dropped = 0
            let done = stopping
            condition.unlock()

            if lost > 0 {
                operatorLogger.warning("access log fell behind; records dropped", metadata: ["dropped": .stringConvertible(lost)])
            }
            for record in batch { write(record) }
            sink.flush()
            if done { return }
        }
    }

    private func write(_ record: AccessRecord) {
        var metadata: Logger.Metadata = [
            "ts": .stringConvertible(record.time),
            "method": .string(record.method),
            "route": .string(record.route),
            "status": .stringConvertible(record.status),
            "client": .string(clients.truncate(record.client)),
            "durationUs": .stringConvertible(record.durationMicroseconds),
        ]
        if let reason = record.reason { metadata["reason"] = .string(reason) }
        if let id = record.externalPurchaseId { metadata["externalPurchaseId"] = .string(id) }
        if let destination = record.destination { metadata["destination"] = .string(destination) }
        if let kind = record.kind { metadata["kind"] = .string(kind) }
        logger.info("request", metadata: metadata)
    }
}
