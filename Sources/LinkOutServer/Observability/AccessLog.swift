import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// The access log: loop threads queue an `AccessRecord` (a lock and an append) and one thread writes them
/// as JSON lines (`AccessLogLine`), a batch per write, so no loop thread waits on a file or a pipe.
///
/// The queue is bounded: when the writer falls behind (a blocked stdout, a full disk), records are
/// dropped and counted rather than held without limit; the count is logged when writing resumes.
final class AccessLog: @unchecked Sendable {
    /// The operator log: where to say that access records were dropped (the access log's own
    /// destination is the one that is stuck).
    private let operatorLogger: Logger
    private let sink: LogSink
    private let clients: ClientAddressPolicy
    /// The records the loops queued, and how many were dropped for want of room since the last write.
    private let queued = Locked<(records: [AccessRecord], dropped: Int)>(([], 0))
    private let capacity = 100_000
    /// A short nap between batches: one write per batch instead of one per request.
    private let worker = PeriodicWorker(name: "linkout-access", interval: 0.05)
    /// Each batch's `time`.
    private let clock: TimeSource

    init(sink: LogSink, clients: ClientAddressPolicy, operatorLogger: Logger, clock: TimeSource) {
        self.sink = sink
        self.clock = clock
        self.operatorLogger = operatorLogger
        self.clients = clients
    }

    func start() {
        worker.start { [self] in
            writeQueued()
            return false
        }
    }

    /// Called from loop threads. The record is moved into the queue, not copied (a copy retained each of its
    /// strings once more).
    func record(_ record: consuming AccessRecord) {
        var record: AccessRecord? = consume record
        queued.withLock { waiting in
            if waiting.records.count < capacity, let moved = record.take() {
                waiting.records.append(moved)
            } else {
                waiting.dropped += 1
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
        let (batch, lost) = queued.withLock { waiting in
            let taken = waiting
            waiting.records.removeAll(keepingCapacity: true)
            waiting.dropped = 0
            return taken
        }
        if lost > 0 {
            operatorLogger.warning("access log fell behind; records dropped", metadata: ["dropped": .stringConvertible(lost)])
        }
        // One line per record into one buffer, one append to the sink: the batch's `time` (when it is
        // written) formatted once, and a client's truncated address reused while records repeat it.
        var lines: [UInt8] = []
        lines.reserveCapacity(batch.count * 240)
        let time = UTCDate.format(milliseconds: clock.nowMs())
        var lastClient = ""
        var lastTruncated = "-"
        for record in batch {
            if record.client != lastClient {
                lastClient = record.client
                lastTruncated = clients.truncate(record.client)
            }
            AccessLogLine.append(record, time: time, client: lastTruncated, to: &lines)
        }
        sink.append(bytes: lines)
        sink.flush()
    }
}

extension AccessLog: ServerPart {
    var partName: String { "the access log" }
}
