import Foundation
import LinkOutCore
import LinkOutStore
import Logging

/// Takes the tokens an app's backend hands over (`POST /v1/tokens`, or a line of `linkout tokens import`):
/// each judged as a link's token is (`TokenRegistration`), the valid ones recorded as visits of kind
/// `registered` (so they are kept, merged and reported by the same path as a link's), and the answer says
/// what became of each. One place for both doors, so they answer alike.
package final class TokenRegistrationIntake {
    private let store: any RecordedTokenStore
    private let config: @Sendable () -> GatewayConfig
    private let record: ([TokenRecord]) throws -> Void

    /// - Parameters:
    ///   - store: reporting's store, to tell a token recorded before (`unchanged`).
    ///   - config: the config now (a reload changes the apps and token rules).
    ///   - record: commits the records durably before returning (the writer in `serve`, the store in a command).
    package init(
        store: any RecordedTokenStore, config: @escaping @Sendable () -> GatewayConfig, record: @escaping ([TokenRecord]) throws -> Void
    ) {
        self.store = store
        self.config = config
        self.record = record
    }

    package struct Answer: Sendable {
        /// 200 every token recorded (or already), 400 the body or any token refused (the valid ones recorded
        /// all the same), 503 the store failed (nothing recorded; send again).
        package var status: Int
        package var body: String
        package var recorded = 0
        package var unchanged = 0
        package var refused = 0
        /// Every refused token's problems, for the log and the command's stderr.
        package var problems: [LineItemProblem] = []
    }

    package func submit(_ body: [UInt8], now: Int64) -> Answer {
        let entries: [TokenRegistration.Entry]
        switch TokenRegistration.parse(body) {
        case .success(let parsed): entries = parsed
        case .failure(let error):
            return Answer(status: 400, body: LineItemIntake.errorBody(error.problems), refused: 1, problems: error.problems)
        }
        let config = config()
        let validator = TokenValidator(policy: config.tokens, apps: config.apps)
        let verdicts = entries.map { TokenRegistration.judge($0, validator: validator, maxLength: config.tokens.maxLength, nowMs: now) }
        var accepted: [TokenRecord] = []
        for case .accepted(let record) in verdicts { accepted.append(record) }
        var answer = Answer(status: 200, body: "")
        // Which were recorded before only decides `unchanged` over `recorded`: a store that cannot say (a
        // PostgreSQL outage, whose visits the writer spools) records them all again, which merges.
        let known = (try? store.recordedTokens(accepted.map(\.externalPurchaseId))) ?? []
        do {
            // The same token twice in one batch is one token.
            var seen: Set<String> = []
            try record(accepted.filter { !known.contains($0.externalPurchaseId) && seen.insert($0.externalPurchaseId).inserted })
        } catch {
            let problem = LineItemProblem(
                field: "", message: "the store failed, no token was recorded; send the same request again (\(error))")
            return Answer(status: 503, body: LineItemIntake.errorBody([problem]), problems: [problem])
        }
        var results: [JSONValue] = []
        var recordedNow: Set<String> = []
        for (index, verdict) in verdicts.enumerated() {
            var members: [JSONValue.Member] =
                entries.count > 1 || !entries[0].path.isEmpty ? [.init(key: "index", value: .integer(Int64(index)))] : []
            switch verdict {
            case .accepted(let record):
                let id = record.externalPurchaseId
                let result = known.contains(id) || !recordedNow.insert(id).inserted ? "unchanged" : "recorded"
                if result == "recorded" { answer.recorded += 1 } else { answer.unchanged += 1 }
                members += [.init(key: "externalPurchaseId", value: .string(id)), .init(key: "result", value: .string(result))]
                if record.stale { members.append(.init(key: "stale", value: .bool(true))) }
            case .refused(let reason, let problems):
                answer.refused += 1
                answer.problems += problems
                members += [
                    .init(key: "result", value: .string("refused")), .init(key: "reason", value: .string(reason)),
                    .init(
                        key: "errors",
                        value: .array(
                            problems.map { problem in
                                .object([
                                    .init(key: "field", value: .string(problem.field)),
                                    .init(key: "message", value: .string(problem.message)),
                                ])
                            })),
                ]
            }
            results.append(.object(members))
        }
        answer.status = answer.refused > 0 ? 400 : 200
        answer.body = JSONValue.object([.init(key: "tokens", value: .array(results))]).text
        return answer
    }
}
