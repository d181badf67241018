import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// Takes a checkout's line items for one token (`POST /v1/line-items`, or a line of `transactions
/// import`): reads them, checks every rule Apple documents that can be checked here, and stores what
/// passes, all or nothing. One place for both doors, so they answer alike.
package final class LineItemIntake {
    private let store: any LineItemStore
    /// The secret `linkoutRef` is read with: the one the gateway signs with now, so that a reload that
    /// rotates `signing` verifies the new references at once (references signed with the old secret no
    /// longer verify: send `externalPurchaseId` for those).
    private let signing: @Sendable () -> SignedReference?

    /// - Parameter signing: the current `signing` secret's reader; nil from it: only ids are taken.
    package init(store: any LineItemStore, signing: @escaping @Sendable () -> SignedReference?) {
        self.store = store
        self.signing = signing
    }

    /// With a secret fixed for the intake's life, as `transactions import` reads it once.
    package convenience init(store: any LineItemStore, signingSecret: [UInt8]?) {
        let signing = signingSecret.map(SignedReference.init(secret:))
        self.init(store: store, signing: { signing })
    }

    package struct Answer: Sendable {
        /// 200 stored (or already stored), 400 refused with every problem, 404 an unknown token, 503 the
        /// store failed (nothing stored; send again).
        package var status: Int
        /// JSON: what was stored per line, or `{"errors":[{"field","message"}]}`.
        package var body: String
        /// Whether anything new was stored (a report will follow).
        package var changed: Bool
        package var externalPurchaseId: String?
        package var problems: [LineItemProblem]
        /// What became of each line, when stored.
        package var stored: LineItemStoreResult?

        var logMetadata: Logger.Metadata {
            var metadata: Logger.Metadata = [:]
            if let externalPurchaseId { metadata["externalPurchaseId"] = "\(externalPurchaseId)" }
            if !problems.isEmpty { metadata["problems"] = "\(problems.map(\.description).joined(separator: "; "))" }
            return metadata
        }
    }

    package func submit(_ body: [UInt8], now: Int64) -> Answer {
        let submission: LineItemSubmission
        switch LineItemSubmission.parse(body, now: now) {
        case .success(let parsed): submission = parsed
        case .failure(let error): return refusal(400, error.problems, id: nil)
        }
        let externalPurchaseId: String
        switch submission.reference {
        case .externalPurchaseId(let id):
            externalPurchaseId = id
        case .linkoutRef(let reference):
            guard let signing = signing() else {
                return refusal(
                    400,
                    [
                        LineItemProblem(
                            field: "linkoutRef", message: "this linkout signs no references (no signing section): send externalPurchaseId")
                    ], id: nil)
            }
            guard let fields = signing.verify(reference) else {
                return refusal(
                    400,
                    [LineItemProblem(field: "linkoutRef", message: "its signature does not verify: send it exactly as linkout gave it")],
                    id: nil)
            }
            externalPurchaseId = fields.externalPurchaseId
        }
        do {
            let result = try store.storeLineItems(
                externalPurchaseId: externalPurchaseId, lineItemIds: submission.lineItems.map(\.lineItemId), now: now
            ) { token, rows in
                try Self.decide(submission.lineItems, externalPurchaseId: externalPurchaseId, token: token, stored: rows, now: now)
            }
            var lines: [JSONValue] = []
            for (name, ids) in [("stored", result.added), ("restated", result.restated), ("unchanged", result.unchanged)] {
                for id in ids {
                    lines.append(.object([.init(key: "lineItemId", value: .string(id)), .init(key: "result", value: .string(name))]))
                }
            }
            let body = JSONValue.object([
                .init(key: "externalPurchaseId", value: .string(externalPurchaseId)),
                .init(key: "lineItems", value: .array(lines)),
            ]).text
            return Answer(
                status: 200, body: body, changed: !result.added.isEmpty || !result.restated.isEmpty,
                externalPurchaseId: externalPurchaseId, problems: [], stored: result)
        } catch let error as LineItemError {
            return refusal(400, error.problems, id: externalPurchaseId)
        } catch ReportingStoreError.unknownToken {
            return refusal(
                404,
                [
                    LineItemProblem(
                        field: submission.reference.isLinkoutRef ? "linkoutRef" : "externalPurchaseId",
                        message:
                            "linkout has no record of this token: line items are taken only for tokens that came through linkout (with several instances on PostgreSQL, a token an instance holds in its outage spool is known once replayed: send again later)"
                    )
                ], id: externalPurchaseId)
        } catch let error as ReportingStoreError {
            return refusal(400, [LineItemProblem(field: "lineItems", message: error.description)], id: externalPurchaseId)
        } catch {
            return refusal(
                503, [LineItemProblem(field: "", message: "the store failed, nothing was stored; send the same request again (\(error))")],
                id: externalPurchaseId)
        }
    }

    /// What `storeLineItems` stores of `lines` for a token: the lines against the token's and the app's
    /// stored ones (`LineItemHistoryRules`), all or nothing. Both doors and the payment providers' events
    /// decide through here.
    package static func decide(
        _ lines: [LineItem], externalPurchaseId: String, token: ExternalPurchaseToken, stored rows: [LineItemRow], now: Int64
    ) throws -> [LineItemWrite] {
        var stored: [StoredLineItem] = []
        for row in rows {
            // Lines were checked when stored; one that no longer reads is a bug, not the checkout's.
            stored.append(StoredLineItem(externalPurchaseId: row.externalPurchaseId, lineItem: try LineItem(json: Array(row.json.utf8))))
        }
        let check = LineItemHistoryRules.check(
            lines, externalPurchaseId: externalPurchaseId, stored: stored,
            tokenCreationDate: token.tokenCreationDate, tokenExpirationDate: token.tokenExpirationDate, now: now)
        if !check.problems.isEmpty { throw LineItemError(problems: check.problems) }
        return check.accepted.map { accepted in
            LineItemWrite(lineItemId: accepted.lineItem.lineItemId, json: String(decoding: accepted.lineItem.json, as: UTF8.self))
        }
    }

    /// Lines made by a payment provider's event, read back as a checkout's submission would be
    /// (`LineItemSubmission.parse`, with `LineItemRules`) and stored in the ledger's transaction through
    /// `decide`: the same checks and the same store path as `POST /v1/line-items`. Throws `LineItemError`
    /// with every problem when the rules refuse them (nothing is stored then).
    package static func store(
        _ lines: [LineItem], externalPurchaseId: String, in ledger: any ProviderLedger, now: Int64
    ) throws -> LineItemStoreResult {
        let body = JSONValue.object([
            .init(key: "externalPurchaseId", value: .string(externalPurchaseId)),
            .init(key: "lineItems", value: .array(try lines.map { try JSONValue.parse($0.json) })),
        ]).text
        let submission: LineItemSubmission
        switch LineItemSubmission.parse(Array(body.utf8), now: now) {
        case .success(let parsed): submission = parsed
        case .failure(let error): throw error
        }
        return try ledger.storeLineItemsInTransaction(
            externalPurchaseId: externalPurchaseId, lineItemIds: submission.lineItems.map(\.lineItemId), now: now
        ) { token, rows in
            try decide(submission.lineItems, externalPurchaseId: externalPurchaseId, token: token, stored: rows, now: now)
        }
    }

    private func refusal(_ status: Int, _ problems: [LineItemProblem], id: String?) -> Answer {
        Answer(status: status, body: Self.errorBody(problems), changed: false, externalPurchaseId: id, problems: problems)
    }

    /// `{"errors":[{"field": …, "message": …}]}`
    package static func errorBody(_ problems: [LineItemProblem]) -> String {
        JSONValue.object([
            .init(
                key: "errors",
                value: .array(
                    problems.map { problem in
                        .object([
                            .init(key: "field", value: .string(problem.field)), .init(key: "message", value: .string(problem.message)),
                        ])
                    }))
        ]).text
    }
}

extension LineItemReference {
    var isLinkoutRef: Bool {
        if case .linkoutRef = self { return true }
        return false
    }
}
