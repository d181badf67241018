/// The rules a submission must keep against itself and against what the app already reported: unique ids,
/// restatements, refunds and subscriptions that name their lines, and the token's active window. Pure: the
/// caller reads the stored lines and the token, and stores what this accepts.
public enum LineItemHistoryRules {
    /// How long after a line's `creationDate` Apple still takes a restatement of it.
    public static let restatementWindowMillis: Int64 = 365 * 24 * 60 * 60 * 1000
    /// Clock allowance before `tokenCreationDate`: the checkout's clock and Apple's differ.
    public static let tokenClockAllowanceMillis: Int64 = 5 * 60 * 1000

    /// Checks `lines` (one submission for token `externalPurchaseId`) against each other and against
    /// `stored`, every line linkout holds for the **same app** under any token. Dates in Unix ms.
    public static func check(
        _ lines: [LineItem], externalPurchaseId: String, stored: [StoredLineItem],
        tokenCreationDate: Int64, tokenExpirationDate: Int64?, now: Int64
    ) -> LineItemCheck {
        var problems: [LineItemProblem] = []
        var refused: Set<Int> = []
        func problem(_ index: Int, _ name: String, _ message: String) {
            refused.insert(index)
            problems.append(LineItemProblem(field: "lineItems[\(index)].\(name)", message: message))
        }

        var storedById: [String: StoredLineItem] = [:]
        for line in stored { storedById[line.lineItem.lineItemId] = line }

        // This token's lines as they will be once the submission is stored: stored ones, replaced by the
        // submitted ones with the same id. References and running totals are checked against this.
        var effective: [String: LineItem] = [:]
        for line in stored where line.externalPurchaseId == externalPurchaseId {
            effective[line.lineItem.lineItemId] = line.lineItem
        }
        var indexById: [String: Int] = [:]
        var dispositions: [Int: LineItemDisposition] = [:]
        // The lines as they are to be stored: a changed line always as a restatement.
        var lines = lines

        for (index, submitted) in lines.enumerated() {
            var line = submitted
            let id = line.lineItemId
            if let first = indexById[id] {
                problem(index, "lineItemId", "repeats lineItems[\(first)].lineItemId: each line of a submission needs its own id")
                continue
            }
            indexById[id] = index
            if let old = storedById[id] {
                guard old.externalPurchaseId == externalPurchaseId else {
                    problem(index, "lineItemId", "is already used by a line of another token: lineItemId must be unique per app")
                    continue
                }
                // Linkout, not the checkout, knows whether Apple holds a line (ReportBody sets the flag when
                // reporting), so the flag alone makes no difference, and a changed line is a restatement
                // with or without it.
                if sameIgnoringRestatement(old.lineItem, line) {
                    dispositions[index] = .unchanged
                    line = old.lineItem
                } else {
                    dispositions[index] = .restatement
                    line.restatement = true
                    checkRestatement(line, of: old.lineItem, now: now) { problem(index, $0, $1) }
                }
                lines[index] = line
            } else {
                dispositions[index] = .new
                if line.restatement == true {
                    problem(
                        index, "restatement", "is true, but no stored line of this token has lineItemId \(JSONText.quote(id)) to restate")
                }
            }
            effective[id] = line

            // The window applies to BUY lines only: a refund's creationDate is when the refund was
            // authorised, which may come after a custom-link token expired, and its buy was windowed.
            if line.kind.isBuy {
                if line.creationDate < tokenCreationDate - tokenClockAllowanceMillis {
                    problem(
                        index, "creationDate",
                        "\(line.creationDate) is before the token was created (tokenCreationDate \(tokenCreationDate), less 5 minutes)")
                }
                if let expiration = tokenExpirationDate, line.creationDate > expiration {
                    problem(index, "creationDate", "\(line.creationDate) is after the token expired (tokenExpirationDate \(expiration))")
                }
            }
        }

        for (index, line) in lines.enumerated() where dispositions[index] != nil {
            guard let reference = line.referenceLineItemId else { continue }
            let target = effective[reference]
            if target == nil, let other = storedById[reference], other.externalPurchaseId != externalPurchaseId {
                problem(index, "referenceLineItemId", "names a line of another token: it must name a line of the same token")
                continue
            }
            guard let target else {
                problem(
                    index, "referenceLineItemId", "names no line of this token, in this submission or stored: \(JSONText.quote(reference))")
                continue
            }
            switch line.kind {
            case .refund: checkRefund(line, of: target) { problem(index, $0, $1) }
            case .subscription:
                if target.kind != .subscription {
                    problem(index, "referenceLineItemId", "must name a subscription line, not \(target.kind.phrase)")
                } else if target.subscriptionEvent != .subscriptionStart {
                    problem(
                        index, "referenceLineItemId",
                        "must name the subscription's SUBSCRIPTION_START line, not a \(target.subscriptionEvent?.rawValue ?? "subscription") line"
                    )
                }
            case .oneTimeBuy: break
            }
        }

        checkRefundTotals(lines, effective: effective, accepted: dispositions) { problem($0, $1, $2) }
        checkPaidDays(effective: effective, indexById: indexById, accepted: dispositions) { problem($0, $1, $2) }

        let accepted = lines.indices.compactMap { index -> AcceptedLineItem? in
            guard !refused.contains(index), let disposition = dispositions[index] else { return nil }
            return AcceptedLineItem(index: index, lineItem: lines[index], disposition: disposition)
        }
        return LineItemCheck(problems: problems, accepted: accepted)
    }

    private static func sameIgnoringRestatement(_ a: LineItem, _ b: LineItem) -> Bool {
        var a = a, b = b
        a.restatement = nil
        b.restatement = nil
        return a == b
    }

    private static func checkRestatement(_ line: LineItem, of old: LineItem, now: Int64, _ problem: (String, String) -> Void) {
        if line.kind != old.kind {
            problem("eventType", "a restatement cannot change the line's kind from \(old.kind.phrase) to \(line.kind.phrase)")
        }
        if line.creationDate != old.creationDate {
            problem("creationDate", "a restatement keeps the original creationDate \(old.creationDate), not \(line.creationDate)")
        }
        if now > old.creationDate + restatementWindowMillis {
            problem("restatement", "comes more than 365 days after the line's creationDate \(old.creationDate): too late to restate")
        }
    }

    private static func checkRefund(_ refund: LineItem, of buy: LineItem, _ problem: (String, String) -> Void) {
        guard buy.kind.isBuy else {
            problem("referenceLineItemId", "names a refund: a refund cannot be refunded")
            return
        }
        if buy.isWithdrawal {
            problem("referenceLineItemId", "names a withdrawn line: there is nothing to refund")
        }
        let name = JSONText.quote(buy.lineItemId)
        if refund.pricingCurrency != buy.pricingCurrency {
            problem("pricingCurrency", "must match the refunded line \(name)'s pricingCurrency \(buy.pricingCurrency)")
        }
        if refund.reportingCurrency != buy.reportingCurrency {
            problem("reportingCurrency", "must match the refunded line \(name)'s reportingCurrency \(buy.reportingCurrency)")
        }
        if refund.exchangeRate != buy.exchangeRate {
            problem("exchangeRate", "must match the refunded line \(name)'s exchangeRate \(buy.exchangeRate.map { "\($0)" } ?? "(none)")")
        }
        if refund.taxCountry != buy.taxCountry {
            problem("taxCountry", "must match the refunded line \(name)'s taxCountry \(buy.taxCountry)")
        }
    }

    /// Refunds of one buy, tax exclusive, must not add up to more than it cost; withdrawn refunds do not count.
    private static func checkRefundTotals(
        _ lines: [LineItem], effective: [String: LineItem], accepted: [Int: LineItemDisposition],
        _ problem: (Int, String, String) -> Void
    ) {
        var totals: [String: Int64] = [:]
        for line in effective.values where line.kind == .refund && !line.isWithdrawal {
            guard let reference = line.referenceLineItemId else { continue }
            totals[reference, default: 0] &+= line.amountTaxExclusive
        }
        var reported: Set<String> = []
        for (index, line) in lines.enumerated().reversed() where line.kind == .refund && accepted[index] != nil {
            guard let reference = line.referenceLineItemId, let buy = effective[reference], buy.kind.isBuy,
                let total = totals[reference], total > buy.amountTaxExclusive, !reported.contains(reference)
            else { continue }
            reported.insert(reference)
            problem(
                index, "amountTaxExclusive",
                "refunds of \(JSONText.quote(reference)) would add up to \(total), more than its amountTaxExclusive \(buy.amountTaxExclusive)"
            )
        }
    }

    /// Paid days are a running total: along one subscription's lines, ordered by `subscriptionStartDate`,
    /// they never go down. A subscription's lines are its SUBSCRIPTION_START and the lines naming it;
    /// lines naming none are grouped by product.
    private static func checkPaidDays(
        effective: [String: LineItem], indexById: [String: Int], accepted: [Int: LineItemDisposition],
        _ problem: (Int, String, String) -> Void
    ) {
        var chains: [String: [LineItem]] = [:]
        for line in effective.values where line.kind == .subscription && !line.isWithdrawal {
            let key: String
            if let reference = line.referenceLineItemId {
                key = "line " + reference
            } else if line.subscriptionEvent == .subscriptionStart {
                key = "line " + line.lineItemId
            } else {
                key = "product " + (line.productIdentifier ?? "")
            }
            chains[key, default: []].append(line)
        }
        for chain in chains.values {
            let ordered = chain.sorted {
                ($0.subscriptionStartDate ?? 0, $0.creationDate, $0.lineItemId) < (
                    $1.subscriptionStartDate ?? 0, $1.creationDate, $1.lineItemId
                )
            }
            for (earlier, later) in zip(ordered, ordered.dropFirst()) {
                let before = earlier.subscriptionDaysOfPaidService ?? 0
                let after = later.subscriptionDaysOfPaidService ?? 0
                guard after < before else { continue }
                let submitted = [later, earlier].lazy.compactMap { line in
                    indexById[line.lineItemId].flatMap { accepted[$0] != nil ? $0 : nil }
                }.first
                guard let index = submitted else { continue }
                problem(
                    index, "subscriptionDaysOfPaidService",
                    "goes down from \(before) (line \(JSONText.quote(earlier.lineItemId))) to \(after) (line \(JSONText.quote(later.lineItemId))): paid days are a running total"
                )
            }
        }
    }
}
