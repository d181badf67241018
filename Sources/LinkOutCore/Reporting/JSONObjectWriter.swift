/// Builds one JSON object's text member by member, skipping absent values, for the canonical bodies of
/// line items and reports.
struct JSONObjectWriter {
    private var body = ""

    var text: String { "{" + body + "}" }

    private mutating func key(_ name: String) {
        if !body.isEmpty { body += "," }
        body += JSONText.quote(name) + ":"
    }

    mutating func string(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        body += JSONText.quote(value)
    }

    mutating func integer(_ name: String, _ value: Int64?) {
        guard let value else { return }
        key(name)
        body += String(value)
    }

    /// Swift's `description` of a finite `Double` is the shortest text that reads back as the same value
    /// (`1.0856`, `2.0`, `1e-05`), and always valid JSON.
    mutating func number(_ name: String, _ value: Double?) {
        guard let value, value.isFinite else { return }
        key(name)
        body += value.description
    }

    mutating func bool(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        body += value ? "true" : "false"
    }

    /// Already-written JSON, such as an array of canonical line items.
    mutating func raw(_ name: String, _ json: String) {
        key(name)
        body += json
    }
}
