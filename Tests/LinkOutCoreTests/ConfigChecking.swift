import Testing

@testable import LinkOutCore

/// What the config test suites share: a config loaded from text as if from `/etc/linkout`, and a problem
/// expected by its key and a part of its rule.
protocol ConfigChecking {}

extension ConfigChecking {
    func load(_ json: String, base: String = "/etc/linkout") -> Result<GatewayConfig, ConfigError> {
        ConfigLoader.load(json: Array(json.utf8), baseDirectory: base)
    }

    func problems(_ json: String) -> [ConfigProblem] {
        switch load(json) {
        case .success: return []
        case .failure(let error): return error.problems
        }
    }

    /// Expects a problem at exactly `key` whose rule contains `rule`.
    func expectProblem(_ json: String, key: String, rule: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let found = problems(json)
        #expect(
            found.contains { $0.key == key && $0.rule.contains(rule) },
            "expected \(key): …\(rule)… in \(found)", sourceLocation: sourceLocation)
    }
}
