/// Reads one JSON object's members by key, remembering which keys were used so the rest can be reported
/// as unknown (a misspelt key would otherwise be silently ignored).
struct ObjectReader {
    private let members: [JSONValue.Member]
    private var used: Set<String> = []
    let key: String

    init?(_ value: JSONValue, key: String, problems: inout [ConfigProblem]) {
        guard case .object(let members) = value else {
            problems.append(ConfigProblem(key: key, rule: "must be an object, not \(value.kindName)"))
            return nil
        }
        self.key = key
        self.members = members
        var seen: Set<String> = []
        for member in members where !seen.insert(member.key).inserted {
            problems.append(ConfigProblem(key: path(member.key), rule: "given more than once"))
        }
    }

    /// The object's keys, in the file's order.
    var memberKeys: [String] { members.map(\.key) }

    func path(_ member: String) -> String { key.isEmpty ? member : "\(key).\(member)" }

    func problem(_ member: String, _ rule: String) -> ConfigProblem {
        ConfigProblem(key: path(member), rule: rule)
    }

    private mutating func value(_ member: String, required: Bool, problems: inout [ConfigProblem]) -> JSONValue? {
        used.insert(member)
        guard let found = members.first(where: { $0.key == member })?.value else {
            if required { problems.append(problem(member, "is required")) }
            return nil
        }
        return found
    }

    mutating func string(_ member: String, required: Bool = false, problems: inout [ConfigProblem]) -> String? {
        guard let found = value(member, required: required, problems: &problems) else { return nil }
        guard case .string(let text) = found else {
            problems.append(problem(member, "must be a string, not \(found.kindName)"))
            return nil
        }
        return text
    }

    mutating func integer(_ member: String, required: Bool = false, problems: inout [ConfigProblem]) -> Int64? {
        guard let found = value(member, required: required, problems: &problems) else { return nil }
        guard case .integer(let number) = found else {
            problems.append(problem(member, "must be a whole number, not \(found.kindName)"))
            return nil
        }
        return number
    }

    mutating func number(_ member: String, required: Bool = false, problems: inout [ConfigProblem]) -> Double? {
        guard let found = value(member, required: required, problems: &problems) else { return nil }
        switch found {
        case .integer(let number): return Double(number)
        case .number(let number): return number
        default:
            problems.append(problem(member, "must be a number, not \(found.kindName)"))
            return nil
        }
    }

    /// A whole number within `range`; outside it, `rule` is reported and nil returned, so the default stands.
    /// Every key with a closed range goes through here, so a range and its message are written once, side by
    /// side (open ranges, such as "more than 0", are checked where they are read).
    mutating func integer(
        _ member: String, required: Bool = false, in range: ClosedRange<Int64>, _ rule: String, problems: inout [ConfigProblem]
    ) -> Int64? {
        within(range, integer(member, required: required, problems: &problems), member, rule, problems: &problems)
    }

    /// A number within `range`, as `integer(_:in:_:problems:)`.
    mutating func number(_ member: String, in range: ClosedRange<Double>, _ rule: String, problems: inout [ConfigProblem]) -> Double? {
        within(range, number(member, problems: &problems), member, rule, problems: &problems)
    }

    private func within<Value>(
        _ range: ClosedRange<Value>, _ value: Value?, _ member: String, _ rule: String, problems: inout [ConfigProblem]
    ) -> Value? {
        guard let value else { return nil }
        guard range.contains(value) else {
            problems.append(problem(member, rule))
            return nil
        }
        return value
    }

    mutating func bool(_ member: String, required: Bool = false, problems: inout [ConfigProblem]) -> Bool? {
        guard let found = value(member, required: required, problems: &problems) else { return nil }
        guard case .bool(let flag) = found else {
            problems.append(problem(member, "must be true or false, not \(found.kindName)"))
            return nil
        }
        return flag
    }

    mutating func array(_ member: String, required: Bool = false, problems: inout [ConfigProblem]) -> [JSONValue]? {
        guard let found = value(member, required: required, problems: &problems) else { return nil }
        guard case .array(let elements) = found else {
            problems.append(problem(member, "must be an array, not \(found.kindName)"))
            return nil
        }
        return elements
    }

    mutating func object(_ member: String, problems: inout [ConfigProblem]) -> ObjectReader? {
        guard let found = value(member, required: false, problems: &problems) else { return nil }
        return ObjectReader(found, key: path(member), problems: &problems)
    }

    func reportUnknownKeys(problems: inout [ConfigProblem]) {
        let present = Set(members.map(\.key))
        for member in members where !used.contains(member.key) {
            // The key asked for and not given that this one most likely meant (`appAppleID` for `appAppleId`).
            let meant = used.filter { !present.contains($0) }.sorted().first { Self.isLikelyTypo(member.key, of: $0) }
            problems.append(problem(member.key, "unknown key" + (meant.map { " (did you mean \($0)?)" } ?? "")))
        }
    }

    /// The same key but for case, or within two edits of it (for keys of four letters or more, so that short
    /// unrelated keys are not offered).
    static func isLikelyTypo(_ given: String, of known: String) -> Bool {
        if given.lowercased() == known.lowercased() { return true }
        let a = Array(given.lowercased().utf8), b = Array(known.lowercased().utf8)
        guard min(a.count, b.count) >= 4, abs(a.count - b.count) <= 2 else { return false }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count] <= 2
    }
}
