extension JSONValue {
    /// Compact JSON text, members in their order. Numbers with a fraction are written in Swift's shortest
    /// form that reads back as the same `Double`.
    public var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                out += JSONText.quote(member.key)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .string(let text): out += JSONText.quote(text)
        case .integer(let number): out += String(number)
        case .number(let number): out += number.isFinite ? "\(number)" : "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .null: out += "null"
        }
    }
}
