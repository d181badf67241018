/// The paths the gateway answers itself, before any link (`LinkPathRules.reserved` keeps links off them).
enum BuiltInPath: CaseIterable {
    case health
    case readiness
    case favicon
    case robots

    var path: StaticString {
        switch self {
        case .health: "/healthz"
        case .readiness: "/readyz"
        case .favicon: "/favicon.ico"
        case .robots: "/robots.txt"
        }
    }

    /// The answer to a GET or HEAD.
    var decision: Decision {
        switch self {
        case .health: .health
        case .readiness: .readiness
        case .favicon: .favicon
        case .robots: .robots
        }
    }

    /// The built-in path `path` is, if any.
    init?(_ path: UnsafeRawBufferPointer) {
        guard let found = Self.allCases.first(where: { path.equals($0.path) }) else { return nil }
        self = found
    }
}
