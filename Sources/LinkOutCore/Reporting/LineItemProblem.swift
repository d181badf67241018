/// One thing wrong with a submitted line item or its envelope, named by the JSON path of the field
/// (`lineItems[2].taxCountry`, `externalPurchaseId`) and the rule it breaks.
public struct LineItemProblem: Sendable, Equatable, CustomStringConvertible {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { field.isEmpty ? message : "\(field): \(message)" }

    /// `prefix.name`, or `name` alone when there is no prefix.
    static func path(_ prefix: String, _ name: String) -> String {
        prefix.isEmpty ? name : "\(prefix).\(name)"
    }
}
