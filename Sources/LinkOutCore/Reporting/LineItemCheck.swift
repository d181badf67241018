/// The outcome of `LineItemHistoryRules.check`: every problem, and the lines that had none. A submission
/// with any problem should be refused whole (store nothing), as Apple takes nothing of a report it refuses.
public struct LineItemCheck: Sendable, Equatable {
    public var problems: [LineItemProblem]
    public var accepted: [AcceptedLineItem]

    public init(problems: [LineItemProblem], accepted: [AcceptedLineItem]) {
        self.problems = problems
        self.accepted = accepted
    }
}
