import CoreMetrics
import LinkOutCore

// The one exit of the shoppers' listener: every answer, whichever route made it and whenever (at once, or
// parked and delivered through the mailbox), is counted and logged here once it is handed to the socket.
extension ShopperListener {
    func answered(_ reply: Reply, facts: ExchangeFacts, peer: @autoclosure () -> String) {
        count(reply.access.count)
        guard let accessLog else { return }
        accessLog.record(
            AccessRecord(
                time: facts.arrivedMs, method: facts.method?.name ?? "-", route: reply.access.route, status: reply.status,
                reason: reply.access.reason, externalPurchaseId: reply.access.externalPurchaseId,
                destination: reply.status == 302 ? reply.access.destination : nil, kind: reply.access.kind,
                client: facts.client ?? peer(), durationMicroseconds: http.clock.monotonicMicroseconds() - facts.startedMicroseconds))
    }

    private func count(_ count: ReplyCount) {
        switch count {
        case .uncounted: return
        case .health: metrics.healthChecks.increment()
        case .notFound: metrics.notFound.increment()
        case .methodNotAllowed: metrics.methodNotAllowed.increment()
        case .malformed: metrics.malformed.increment()
        case .link(let link, let outcome):
            guard let counters = linkMetrics(link) else { return }
            switch outcome {
            case .rateLimited:
                counters.rateLimited.increment()
            case .rejected(let reason):
                counters.rejected.increment()
                counters.rejections[reason]?.increment()
            case .unavailable(let refusal):
                if let refusal { counters.rejections[refusal]?.increment() }
                counters.unavailable.increment()
            case .redirected(let destination, let allDown):
                counters.redirected.increment()
                if destination < counters.destinations.count { counters.destinations[destination].increment() }
                if allDown { counters.allDown.increment() }
            case .redirectedWithoutToken(let reason, let allDown):
                counters.rejections[reason]?.increment()
                counters.redirectedWithoutToken.increment()
                if allDown { counters.allDown.increment() }
            case .tapped(let destination, let allDown):
                counters.tapped.increment()
                if destination < counters.destinations.count { counters.destinations[destination].increment() }
                if allDown { counters.allDown.increment() }
            }
        }
    }

    /// The link's counters in the config serving now. A reload between a strict link-out's decision and
    /// its answer may have moved the link (found again by id) or dropped it (not counted).
    func linkMetrics(_ link: LinkReference) -> LinkMetrics? {
        let links = serving.gateway.config.links
        if link.index < links.count, links[link.index].id == link.id { return serving.linkMetrics[link.index] }
        return links.firstIndex { $0.id == link.id }.map { serving.linkMetrics[$0] }
    }
}
