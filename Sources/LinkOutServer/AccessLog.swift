import Foundation
import LinkOutCore
import LinkOutStore
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
    private let lock = NSLock()
    private var queue: [AccessRecord] = []
    private var dropped = 0
    private let capacity = 100_000
    /// A short nap between batches: one write per batch instead of one per request.
    private let worker = PeriodicWorker(name: "linkout-access-log", interval: 0.05)

    init(sink: LogSink, clients: ClientAddressPolicy, operatorLogger: Logger) {
        self.sink = sink
        self.operatorLogger = operatorLogger
        self.clients = clients
        self.logger = Logger(label: "linkout.access") { label in JSONLinesLogHandler(label: label, sink: sink) }
    }

    func start() {
        worker.start { [self] in
            writeQueued()
            return false
        }
    }

    /// Called from loop threads.
    func record(_ record: AccessRecord) {
        lock.withLock {
            if queue.count < capacity {
                queue.append(record)
            } else {
                dropped += 1
            }
        }
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
        worker.stop()
        // The worker has ended: what the loops queued since its last round is written from here.
        writeQueued()
    }

    private func writeQueued() {
        let (batch, lost) = lock.withLock {
            defer {
                queue.removeAll(keepingCapacity: true)
                dropped = 0
            }
            return (queue, dropped)
        }
        if lost > 0 {
            operatorLogger.warning("access log fell behind; records dropped", metadata: ["dropped": .stringConvertible(lost)])
        }
        for record in batch { write(record) }
        sink.flush()
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
