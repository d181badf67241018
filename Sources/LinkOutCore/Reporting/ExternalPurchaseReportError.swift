/// One entry of Apple's 400 answer to a report, `{"errors":[{errorCode, errorMessage, fieldName, lineItemId}]}`.
/// Every field may be missing: Apple documents only some of its codes, and the answer must still be kept.
public struct ExternalPurchaseReportError: Sendable, Equatable, CustomStringConvertible {
    public var errorCode: Int64?
    public var errorMessage: String?
    public var fieldName: String?
    public var lineItemId: String?

    public init(errorCode: Int64? = nil, errorMessage: String? = nil, fieldName: String? = nil, lineItemId: String? = nil) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.fieldName = fieldName
        self.lineItemId = lineItemId
    }

    public var description: String {
        var parts: [String] = []
        if let errorCode { parts.append("code \(errorCode)") }
        if let lineItemId { parts.append("line \(lineItemId)") }
        if let fieldName { parts.append("field \(fieldName)") }
        if let errorMessage { parts.append(errorMessage) }
        return parts.isEmpty ? "(empty error)" : parts.joined(separator: ", ")
    }

    /// The entries of Apple's error body, or nil when the body is not JSON with an `errors` array. Members
    /// of the wrong type are skipped, unknown members ignored.
    public static func parseErrors(_ body: [UInt8]) -> [ExternalPurchaseReportError]? {
        guard let document = try? JSONValue.parse(body), case .object(let members) = document,
            case .array(let entries)? = members.first(where: { $0.key == "errors" })?.value
        else { return nil }
        return entries.compactMap { entry in
            guard case .object(let fields) = entry else { return nil }
            var error = ExternalPurchaseReportError()
            for field in fields {
                switch (field.key, field.value) {
                case ("errorCode", .integer(let code)): error.errorCode = code
                case ("errorCode", .string(let text)): error.errorCode = Int64(text)
                case ("errorMessage", .string(let text)): error.errorMessage = text
                case ("fieldName", .string(let text)): error.fieldName = text
                case ("lineItemId", .string(let text)): error.lineItemId = text
                default: break
                }
            }
            return error
        }
    }
}
