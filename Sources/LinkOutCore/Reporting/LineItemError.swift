/// Line items refused, with every problem found (not just the first), so the checkout fixes them in one go.
public struct LineItemError: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [LineItemProblem]

    public init(problems: [LineItemProblem]) {
        self.problems = problems
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
