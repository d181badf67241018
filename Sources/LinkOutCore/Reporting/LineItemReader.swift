/// Reads one line item object field by field, reporting every wrong type, missing field, field its kind
/// does not have and unknown field, with paths under `field` (such as `lineItems[2]`).
enum LineItemReader {
    private static let common: [String] = [
        "lineItemId", "creationDate", "eventType", "pricingCurrency", "reportingCurrency", "exchangeRate",
        "amountTaxExclusive", "amountTaxInclusive", "netAmountTaxExclusive", "taxAmount", "taxCountry",
        "restatement", "erroneouslySubmitted",
    ]
    private static let commonRequired: Set<String> = [
        "lineItemId", "creationDate", "eventType", "pricingCurrency", "reportingCurrency",
        "amountTaxExclusive", "amountTaxInclusive", "netAmountTaxExclusive", "taxAmount", "taxCountry",
    ]
    private static let product = ["productType", "productIdentifier", "quantity"]
    private static let subscriptionOnly = [
        "subscriptionEvent", "subscriptionStartDate", "subscriptionEndDate", "subscriptionDaysOfPaidService",
    ]

    /// Every field Apple's three line items have.
    static let allFields: Set<String> = Set(common + product + subscriptionOnly + ["referenceLineItemId"])

    static func allowed(_ kind: LineItemKind) -> Set<String> {
        switch kind {
        case .oneTimeBuy: Set(common + product)
        case .subscription: Set(common + product + subscriptionOnly + ["referenceLineItemId"])
        case .refund: Set(common + ["referenceLineItemId"])
        }
    }

    static func required(_ kind: LineItemKind) -> Set<String> {
        switch kind {
        case .oneTimeBuy: commonRequired.union(product)
        case .subscription: commonRequired.union(product).union(subscriptionOnly)
        case .refund: commonRequired.union(["referenceLineItemId"])
        }
    }

    static func read(_ value: JSONValue, field prefix: String, problems: inout [LineItemProblem]) -> LineItem? {
        guard case .object(let members) = value else {
            problems.append(LineItemProblem(field: prefix, message: "must be an object, not \(value.kindName)"))
            return nil
        }
        var fields = Fields(prefix: prefix)
        for member in members {
            if fields.values[member.key] != nil {
                fields.problem(member.key, "appears more than once")
            } else if !allFields.contains(member.key) {
                fields.problem(member.key, "is not a field of Apple's line items")
            } else {
                fields.values[member.key] = member.value
            }
        }

        let kind = readKind(&fields)
        if let kind {
            let allowed = allowed(kind)
            for name in fields.values.keys.sorted() where !allowed.contains(name) {
                fields.problem(name, "is not allowed on \(kind.phrase)")
                fields.values[name] = nil
            }
            for name in required(kind).sorted() where fields.values[name] == nil && !fields.reported.contains(name) {
                fields.problem(name, "is required on \(kind.phrase)")
            }
        } else {
            for name in commonRequired.sorted() where fields.values[name] == nil && !fields.reported.contains(name) {
                fields.problem(name, "is required")
            }
        }

        let lineItemId = fields.string("lineItemId")
        let referenceLineItemId = fields.string("referenceLineItemId")
        let creationDate = fields.integer("creationDate")
        let productIdentifier = fields.string("productIdentifier")
        let quantity = fields.integer("quantity")
        var subscriptionEvent: SubscriptionEvent?
        if let text = fields.string("subscriptionEvent") {
            subscriptionEvent = SubscriptionEvent(rawValue: text)
            if subscriptionEvent == nil {
                fields.problem(
                    "subscriptionEvent",
                    "must be one of SUBSCRIPTION_START, RENEWAL, SUBSCRIPTION_CHANGE, SUBSCRIPTION_PAYMENT, not \(JSONText.quote(text))")
            }
        }
        let subscriptionStartDate = fields.integer("subscriptionStartDate")
        let subscriptionEndDate = fields.integer("subscriptionEndDate")
        let subscriptionDaysOfPaidService = fields.integer("subscriptionDaysOfPaidService")
        let pricingCurrency = fields.string("pricingCurrency")
        let reportingCurrency = fields.string("reportingCurrency")
        let exchangeRate = fields.number("exchangeRate")
        let amountTaxExclusive = fields.integer("amountTaxExclusive")
        let amountTaxInclusive = fields.integer("amountTaxInclusive")
        let netAmountTaxExclusive = fields.integer("netAmountTaxExclusive")
        let taxAmount = fields.integer("taxAmount")
        let taxCountry = fields.string("taxCountry")
        let restatement = fields.bool("restatement")
        let erroneouslySubmitted = fields.bool("erroneouslySubmitted")
        problems += fields.problems

        // A line with problems is still built when its kind and common fields could be read, so that the
        // rules can report what else is wrong with it; the caller refuses it for the problems anyway.
        guard let kind, let lineItemId, let creationDate, let pricingCurrency,
            let reportingCurrency, let amountTaxExclusive, let amountTaxInclusive, let netAmountTaxExclusive,
            let taxAmount, let taxCountry
        else { return nil }
        return LineItem(
            lineItemId: lineItemId, kind: kind, referenceLineItemId: referenceLineItemId, creationDate: creationDate,
            productIdentifier: productIdentifier, quantity: quantity, subscriptionEvent: subscriptionEvent,
            subscriptionStartDate: subscriptionStartDate, subscriptionEndDate: subscriptionEndDate,
            subscriptionDaysOfPaidService: subscriptionDaysOfPaidService, pricingCurrency: pricingCurrency,
            reportingCurrency: reportingCurrency, exchangeRate: exchangeRate, amountTaxExclusive: amountTaxExclusive,
            amountTaxInclusive: amountTaxInclusive, netAmountTaxExclusive: netAmountTaxExclusive, taxAmount: taxAmount,
            taxCountry: taxCountry, restatement: restatement, erroneouslySubmitted: erroneouslySubmitted)
    }

    /// The kind from `eventType` and `productType`, or nil (with a problem) when they do not name one.
    private static func readKind(_ fields: inout Fields) -> LineItemKind? {
        guard let eventType = fields.string("eventType") else { return nil }
        switch eventType {
        case "REFUND":
            return .refund
        case "BUY":
            guard fields.values["productType"] != nil else {
                fields.problem("productType", "is required when eventType is BUY: ONE_TIME_BUY or SUBSCRIPTION")
                return nil
            }
            guard let productType = fields.string("productType") else { return nil }
            switch productType {
            case "ONE_TIME_BUY": return .oneTimeBuy
            case "SUBSCRIPTION": return .subscription
            default:
                fields.problem("productType", "must be ONE_TIME_BUY or SUBSCRIPTION, not \(JSONText.quote(productType))")
                return nil
            }
        default:
            fields.problem("eventType", "must be BUY or REFUND, not \(JSONText.quote(eventType))")
            return nil
        }
    }

    /// The members of one object by name, read once each; a field's type problem is reported once.
    private struct Fields {
        let prefix: String
        var values: [String: JSONValue] = [:]
        var problems: [LineItemProblem] = []
        var reported: Set<String> = []

        init(prefix: String) { self.prefix = prefix }

        mutating func problem(_ name: String, _ message: String) {
            reported.insert(name)
            problems.append(LineItemProblem(field: LineItemProblem.path(prefix, name), message: message))
        }

        mutating func string(_ name: String) -> String? {
            guard let value = values[name] else { return nil }
            if case .string(let text) = value { return text }
            once(name, "must be a string, not \(value.kindName)")
            return nil
        }

        mutating func integer(_ name: String) -> Int64? {
            guard let value = values[name] else { return nil }
            switch value {
            case .integer(let number): return number
            case .number: once(name, "must be an integer, not a number with a fraction or exponent")
            default: once(name, "must be an integer, not \(value.kindName)")
            }
            return nil
        }

        mutating func number(_ name: String) -> Double? {
            guard let value = values[name] else { return nil }
            switch value {
            case .integer(let number): return Double(number)
            case .number(let number): return number
            default: once(name, "must be a number, not \(value.kindName)")
            }
            return nil
        }

        mutating func bool(_ name: String) -> Bool? {
            guard let value = values[name] else { return nil }
            if case .bool(let flag) = value { return flag }
            once(name, "must be true or false, not \(value.kindName)")
            return nil
        }

        private mutating func once(_ name: String, _ message: String) {
            guard !reported.contains(name) else { return }
            problem(name, message)
        }
    }
}

extension LineItemKind {
    /// How a message names the kind: "a one-time buy", "a subscription", "a refund".
    var phrase: String {
        switch self {
        case .oneTimeBuy: "a one-time buy"
        case .subscription: "a subscription"
        case .refund: "a refund"
        }
    }
}
