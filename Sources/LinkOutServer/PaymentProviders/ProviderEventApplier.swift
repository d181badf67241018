import LinkOutCore
import LinkOutStore

/// What linkout does with a payment provider's verified event, in the ledger's one transaction: keep it once
/// per event id, find its token (carried by the event, or through the ids bound by earlier events), bind its
/// ids, make its line (`ProviderLines`) and store it the way `POST /v1/line-items` does
/// (`LineItemIntake.store`). An event that cannot be placed yet is parked, never dropped: when the event that
/// binds what it waits for arrives, it is taken then, in that event's transaction.
struct ProviderEventApplier {
    let settings: PaymentProvidersSettings

    struct Result: Equatable {
        var outcome: ProviderOutcome
        var externalPurchaseId: String?
        var waitingFor: String?
        var problem: String?
        /// Lines were stored or restated: a report follows.
        var changed = false
    }

    /// One step's result, with the keys it bound (which may free parked events).
    private struct Step {
        var result: Result
        var freed: [String] = []
    }

    /// The body read as its provider's event.
    static func read(_ body: [UInt8], provider: PaymentProvider) -> Swift.Result<ProviderEvent, ProviderEventError> {
        switch provider {
        case .stripe: StripeEvent.read(body)
        case .paddle: PaddleEvent.read(body)
        }
    }

    /// The payment's environment: Stripe's `livemode`, else the provider's configured one (Paddle's secret).
    func environment(of event: ProviderEvent) -> TokenEnvironment {
        if let live = event.live { return live ? .production : .sandbox }
        return settings[event.provider]?.environment ?? .production
    }

    /// Takes a verified event: `.duplicate` when its id was taken before, else what became of it. Also
    /// returns what became of the parked events it freed.
    func take(
        _ event: ProviderEvent, body: [UInt8], ledger: any ProviderLedger, now: Int64
    ) throws -> (Result, freed: [ProviderEventRecord: Result]) {
        let record = ProviderEventRecord(
            provider: event.provider, eventId: event.eventId, type: event.type, objectId: event.objectId,
            environment: environment(of: event),
            occurredAt: event.occurredAt, receivedAt: now, outcome: .parked, externalPurchaseId: event.externalPurchaseId,
            body: String(decoding: body, as: UTF8.self))
        guard try ledger.insertEvent(record) else { return (Result(outcome: .duplicate), [:]) }
        let step = try apply(event, ledger: ledger, now: now)
        try save(event.provider, event.eventId, step.result, ledger: ledger, now: now)
        let freed = try release(event.provider, keys: step.freed, ledger: ledger, now: now)
        return (step.result, freed)
    }

    /// Every parked and waiting event tried again (a configured product, a token replayed from an outage
    /// spool); a parked one older than `ProviderOutcome.parkedForMs` is unmatched: no event bound it in
    /// the time both providers retry, so its payment did not come through linkout.
    func sweep(ledger: any ProviderLedger, now: Int64) throws -> [ProviderEventRecord: Result] {
        var results: [ProviderEventRecord: Result] = [:]
        for record in try ledger.openEvents(nil, waitingFor: nil) {
            guard settings[record.provider] != nil, case .success(let event) = Self.read(Array(record.body.utf8), provider: record.provider)
            else { continue }
            var step = try apply(event, ledger: ledger, now: now)
            if step.result.outcome == .parked, now - record.receivedAt > ProviderOutcome.parkedForMs {
                step.result = Result(
                    outcome: .unmatched, externalPurchaseId: step.result.externalPurchaseId,
                    problem:
                        "waited \(ProviderOutcome.parkedForMs / 86_400_000) days for \(step.result.waitingFor ?? "its binding"): not a payment through linkout"
                )
            }
            guard
                step.result
                    != Result(
                        outcome: record.outcome, externalPurchaseId: record.externalPurchaseId, waitingFor: record.waitingFor,
                        problem: record.problem)
            else { continue }
            try save(record.provider, record.eventId, step.result, ledger: ledger, now: now)
            results[record] = step.result
            for (freed, result) in try release(record.provider, keys: step.freed, ledger: ledger, now: now) { results[freed] = result }
        }
        return results
    }

    private func save(_ provider: PaymentProvider, _ eventId: String, _ result: Result, ledger: any ProviderLedger, now: Int64) throws {
        try ledger.setOutcome(
            provider, eventId: eventId, result.outcome, externalPurchaseId: result.externalPurchaseId, waitingFor: result.waitingFor,
            problem: result.problem, now: now)
    }

    /// Takes again the parked events waiting for `keys`, and those their taking frees, in turn.
    private func release(
        _ provider: PaymentProvider, keys: [String], ledger: any ProviderLedger, now: Int64
    ) throws -> [ProviderEventRecord: Result] {
        var results: [ProviderEventRecord: Result] = [:]
        var pending = keys
        var seen: Set<String> = []
        while !pending.isEmpty {
            let batch = pending.filter { seen.insert($0).inserted }
            pending = []
            for record in try ledger.openEvents(provider, waitingFor: batch) {
                guard case .success(let event) = Self.read(Array(record.body.utf8), provider: provider) else { continue }
                let step = try apply(event, ledger: ledger, now: now)
                try save(provider, record.eventId, step.result, ledger: ledger, now: now)
                results[record] = step.result
                pending += step.freed
            }
        }
        return results
    }

    /// The event's effect, against what the ledger holds now.
    private func apply(_ event: ProviderEvent, ledger: any ProviderLedger, now: Int64) throws -> Step {
        let provider = event.provider
        switch event.effect {
        case .ignore(let why):
            return Step(result: Result(outcome: .ignored, externalPurchaseId: event.externalPurchaseId, problem: why))
        case .address(let id, let country):
            try ledger.setAddressCountry(provider, id, country: country, now: now)
            return Step(result: Result(outcome: .taken), freed: [id])
        default:
            break
        }

        // The token: the event's own reference, else a binding of one of its ids.
        var token: String?
        var boundLine: String?
        if let carried = event.externalPurchaseId {
            guard ExternalPurchaseID.isValid(carried) else {
                return Step(
                    result: Result(
                        outcome: .unmatched,
                        problem:
                            "its reference \(JSONText.quote(String(carried.prefix(64)))) is not an externalPurchaseId: a payment that did not come through linkout"
                    ))
            }
            token = carried
        } else {
            for key in event.findBy {
                if let binding = try ledger.binding(provider, key) {
                    token = binding.externalPurchaseId
                    boundLine = binding.lineItemId
                    break
                }
            }
        }
        guard let token else {
            if let key = event.findBy.first { return Step(result: Result(outcome: .parked, waitingFor: key)) }
            return Step(
                result: Result(
                    outcome: .unmatched,
                    problem:
                        "it carries no externalPurchaseId (client_reference_id, metadata or custom_data): a payment that did not come through linkout"
                ))
        }
        guard try ledger.token(token) != nil else {
            // Unknown to this store: on PostgreSQL it may still be in an instance's outage spool. The sweep
            // tries again until the parking time runs out.
            return Step(result: Result(outcome: .parked, externalPurchaseId: token, waitingFor: "token:" + token))
        }
        var result = Result(outcome: .taken, externalPurchaseId: token)
        if case .review(let why) = event.effect {
            result.outcome = .held
            result.problem = why
            return Step(result: result)
        }

        // A test payment's ids are bound too: its refunds then find it, and are held with it.
        let saleLine: String? = if case .sale(let sale) = event.effect { sale.lineItemId } else { nil }
        var freed = try ledger.bind(provider, event.binds, externalPurchaseId: token, lineItemId: saleLine ?? boundLine, now: now)
        if let mismatch = ProviderLines.environmentMismatch(live: environment(of: event) == .production, externalPurchaseId: token) {
            result.outcome = .held
            result.problem = mismatch
            return Step(result: result, freed: freed)
        }

        let made: ProviderLines.Outcome
        switch event.effect {
        case .sale(let sale):
            var country = sale.countryAlpha2
            if country == nil, let address = sale.addressId {
                country = try ledger.addressCountry(provider, address)
                if country == nil {
                    result.outcome = .parked
                    result.waitingFor = address
                    return Step(result: result, freed: freed)
                }
            }
            var start: LineItem?
            if let subscription = sale.subscription, subscription.event != .subscriptionStart {
                let key = subscription.subscriptionId + "#start"
                if let line = try ledger.binding(provider, key)?.lineItemId {
                    start = try ledger.lineItem(externalPurchaseId: token, lineItemId: line)
                }
                guard start != nil else {
                    result.outcome = .parked
                    result.waitingFor = key
                    return Step(result: result, freed: freed)
                }
            }
            made = ProviderLines.sale(
                sale, country: country, defaultProductIdentifier: settings[provider]?.defaultProductIdentifier, start: start)
        case .refund(let refund):
            guard let line = boundLine else {
                result.outcome = .parked
                result.waitingFor = refund.refundOf
                return Step(result: result, freed: freed)
            }
            guard let bought = try ledger.lineItem(externalPurchaseId: token, lineItemId: line) else {
                // Bound, but its line is not stored yet (waiting for a product, or held): taken when it is.
                result.outcome = .parked
                result.waitingFor = "line:" + line
                return Step(result: result, freed: freed)
            }
            made = ProviderLines.refund(refund, of: bought)
        default:
            // .bind: the ids are all it brings.
            return Step(result: result, freed: freed)
        }

        switch made {
        case .wait(let why):
            result.outcome = .waiting
            result.problem = why
        case .hold(let why):
            result.outcome = .held
            result.problem = why
        case .line(let line):
            do {
                let stored = try LineItemIntake.store([line], externalPurchaseId: token, in: ledger, now: now)
                result.changed = !stored.added.isEmpty || !stored.restated.isEmpty
                freed.append("line:" + line.lineItemId)
                if case .sale(let sale) = event.effect, let subscription = sale.subscription, subscription.event == .subscriptionStart {
                    freed += try ledger.bind(
                        provider, [subscription.subscriptionId + "#start"], externalPurchaseId: token, lineItemId: line.lineItemId, now: now
                    )
                }
            } catch let error as LineItemError {
                // The same rules as a checkout's post: what they refuse a person must look at.
                result.outcome = .held
                result.problem = "refused by linkout's checks: " + error.problems.map(\.description).joined(separator: "; ")
            }
        }
        return Step(result: result, freed: freed)
    }
}
