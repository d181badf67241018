/// What the checkout sends (`POST /v1/line-items`, and each line of `linkout transactions import`):
/// `{"externalPurchaseId": "…", "lineItems": […]}`, or `"linkoutRef"` instead of the id.
public struct LineItemSubmission: Sendable, Equatable {
    /// The most line items one submission may carry.
    public static let maxLineItems = 100

    public var reference: LineItemReference
    public var lineItems: [LineItem]

    public init(reference: LineItemReference, lineItems: [LineItem]) {
        self.reference = reference
        self.lineItems = lineItems
    }

    /// Reads a submission and checks each line on its own (`LineItemRules`), reporting every problem: a
    /// line with a wrong field still has its other fields checked.
    /// Rules that need the token's other lines are `LineItemHistoryRules`'.
    public static func parse(_ bytes: [UInt8], now: Int64) -> Result<LineItemSubmission, LineItemError> {
        do {
            return parse(try JSONValue.parse(bytes), now: now)
        } catch {
            return .failure(LineItemError(problems: [LineItemProblem(field: "", message: "\(error)")]))
        }
    }

    /// Reads a submission from its parsed JSON; see `parse(_:now:)`.
    public static func parse(_ body: JSONValue, now: Int64) -> Result<LineItemSubmission, LineItemError> {
        var problems: [LineItemProblem] = []
        func problem(_ field: String, _ message: String) {
            problems.append(LineItemProblem(field: field, message: message))
        }
        guard case .object(let members) = body else {
            return .failure(
                LineItemError(problems: [LineItemProblem(field: "", message: "the body must be a JSON object, not \(body.kindName)")]))
        }
        var values: [String: JSONValue] = [:]
        for member in members {
            if values[member.key] != nil {
                problem(member.key, "appears more than once")
            } else if ["externalPurchaseId", "linkoutRef", "lineItems"].contains(member.key) {
                values[member.key] = member.value
            } else {
                problem(member.key, "is not a field of a line-item submission (externalPurchaseId or linkoutRef, and lineItems)")
            }
        }

        var reference: LineItemReference?
        func text(_ name: String) -> String? {
            guard let value = values[name] else { return nil }
            guard case .string(let text) = value else {
                problem(name, "must be a string, not \(value.kindName)")
                return nil
            }
            if text.isEmpty { problem(name, "must not be empty") }
            return text
        }
        let id = text("externalPurchaseId")
        let ref = text("linkoutRef")
        switch (values["externalPurchaseId"], values["linkoutRef"]) {
        case (nil, nil): problem("externalPurchaseId", "is required, or linkoutRef instead: which token these lines belong to")
        case (.some, .some): problem("linkoutRef", "must not come with externalPurchaseId: send exactly one of the two")
        default:
            if let id { reference = .externalPurchaseId(id) }
            if let ref { reference = .linkoutRef(ref) }
        }

        var lineItems: [LineItem] = []
        switch values["lineItems"] {
        case nil:
            problem("lineItems", "is required: an array of 1 to \(maxLineItems) line items")
        case .array(let elements)?:
            if elements.isEmpty { problem("lineItems", "must hold at least one line item") }
            if elements.count > maxLineItems {
                problem("lineItems", "must hold at most \(maxLineItems) line items, not \(elements.count)")
            }
            for (index, element) in elements.enumerated() {
                let field = "lineItems[\(index)]"
                if let item = LineItemReader.read(element, field: field, problems: &problems) {
                    problems += LineItemRules.check(item, field: field, now: now)
                    lineItems.append(item)
                }
            }
        case let value?:
            problem("lineItems", "must be an array, not \(value.kindName)")
        }

        guard let reference, problems.isEmpty else { return .failure(LineItemError(problems: problems)) }
        return .success(LineItemSubmission(reference: reference, lineItems: lineItems))
    }
}
