import CoreMetrics
import LinkOutCore
import LinkOutStore
import Logging

/// The writer's end of a batch (on its thread): each parked link-out gets its answer made here, the `302`
/// or the 404 page once committed, the 503 page when the commit failed, and each loop one delivery
/// through its mailbox; a thread waiting instead of a loop is told. Counts the commit and logs a failure.
struct CommitDelivery: Sendable {
    let mailboxes: LoopMailboxes
    let metrics: GatewayMetrics
    let logger: Logger
    /// The pages serving now, for a 404 or a 503 (read once per batch that needs one).
    let pages: @Sendable () -> PageCatalog

    func deliver(_ tickets: [ReplyTicket], outcome: CommitOutcome) {
        let error = outcome.error
        metrics.commitDuration.recordNanoseconds(Int64(outcome.nanoseconds))
        metrics.commitBatchSize.record(tickets.count)
        if error != nil { metrics.commitFailures.increment() }
        var perLoop = [[ParkedReply]](repeating: [], count: mailboxes.count)
        var alreadyAnswered = 0
        var catalog: PageCatalog?
        for ticket in tickets {
            switch ticket {
            case .answered:
                alreadyAnswered += 1
            case .waiting(let waiter):
                waiter.done(error)
            case .parked(let visit):
                let reply = error == nil ? committed(visit, catalog: &catalog) : failed(visit, catalog: &catalog)
                perLoop[visit.loop].append(ParkedReply(exchange: visit.exchange, reply: reply))
            }
        }
        if let error {
            logger.error(
                "store commit failed; answering 503",
                metadata: [
                    "visits": "\(tickets.count - alreadyAnswered)", "error": "\(error)",
                ])
            if alreadyAnswered > 0 {
                // Relaxed durability: these shoppers were redirected before the commit that just failed.
                logger.critical(
                    "relaxed durability: visits redirected before commit were not recorded",
                    metadata: [
                        "visits": "\(alreadyAnswered)", "error": "\(error)",
                    ])
            }
        }
        for (loop, replies) in perLoop.enumerated() where !replies.isEmpty {
            mailboxes.deliver(replies, to: loop)
        }
    }

    private func committed(_ visit: ParkedVisit, catalog: inout PageCatalog?) -> Reply {
        switch visit.answer {
        case .redirect(let location, let reason):
            return ShopperReplies.redirect(location: location, reason: reason, access: visit.access)
        case .notFound:
            return ShopperReplies.page(.notFound, language: visit.language, catalog: current(&catalog), access: visit.access)
        }
    }

    private func failed(_ visit: ParkedVisit, catalog: inout PageCatalog?) -> Reply {
        var access = visit.access
        access.reason = "store_failed"
        access.destination = nil
        access.count = access.count.unavailable
        return ShopperReplies.page(
            .unavailable, language: visit.language, catalog: current(&catalog), extra: [ReplyHeader("Retry-After", "1")], access: access)
    }

    private func current(_ catalog: inout PageCatalog?) -> PageCatalog {
        if let catalog { return catalog }
        let now = pages()
        catalog = now
        return now
    }
}
