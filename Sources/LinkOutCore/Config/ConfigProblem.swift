/// One thing wrong with a config file: the key (a path like `links[1].destinations[0].url`) and the rule.
public struct ConfigProblem: Sendable, Equatable, CustomStringConvertible {
    public var key: String
    public var rule: String

    public init(key: String, rule: String) {
        self.key = key
        self.rule = rule
    }

    public var description: String { key.isEmpty ? rule : "\(key): \(rule)" }
}

/// Every problem found in a config, not just the first.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public var problems: [ConfigProblem]

    public init(problems: [ConfigProblem]) {
        self.problems = problems
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
