/// One transaction line of Apple's external purchase report, with Apple's field names and units: amounts in
/// integer milli-units of the reporting currency (2.99 is 2990), dates in Unix milliseconds.
///
/// `kind` stands for Apple's `eventType` and `productType` together, so a refund with a product type cannot
/// be built. Fields a kind does not have are nil. `exchangeRate` is kept as a `Double` and written back with
/// the shortest text that reads back as the same `Double` (Swift's `description`), so a rate read as
/// `1.0856` is written as `1.0856`; what Apple receives is the same number the checkout sent.
public struct LineItem: Sendable, Equatable {
    public var lineItemId: String
    public var kind: LineItemKind
    /// Required on refunds; on subscriptions, optionally the line of their SUBSCRIPTION_START.
    public var referenceLineItemId: String?
    /// Unix ms when the customer authorised the transaction; a restatement keeps the original.
    public var creationDate: Int64
    /// One-time buys and subscriptions only.
    public var productIdentifier: String?
    /// One-time buys and subscriptions only; amounts are line totals whatever the quantity.
    public var quantity: Int64?
    public var subscriptionEvent: SubscriptionEvent?
    public var subscriptionStartDate: Int64?
    public var subscriptionEndDate: Int64?
    /// Running total of paid days: 0 at SUBSCRIPTION_START.
    public var subscriptionDaysOfPaidService: Int64?
    public var pricingCurrency: String
    public var reportingCurrency: String
    /// pricing × rate = reporting; only when the two currencies differ.
    public var exchangeRate: Double?
    public var amountTaxExclusive: Int64
    public var amountTaxInclusive: Int64
    /// The line's net after every refund and restatement so far.
    public var netAmountTaxExclusive: Int64
    public var taxAmount: Int64
    /// ISO 3166-1 alpha-3.
    public var taxCountry: String
    /// `true` replaces the line stored under the same `lineItemId`.
    public var restatement: Bool?
    /// With `restatement: true`, withdraws the line.
    public var erroneouslySubmitted: Bool?

    public init(
        lineItemId: String, kind: LineItemKind, referenceLineItemId: String? = nil, creationDate: Int64,
        productIdentifier: String? = nil, quantity: Int64? = nil,
        subscriptionEvent: SubscriptionEvent? = nil, subscriptionStartDate: Int64? = nil,
        subscriptionEndDate: Int64? = nil, subscriptionDaysOfPaidService: Int64? = nil,
        pricingCurrency: String, reportingCurrency: String, exchangeRate: Double? = nil,
        amountTaxExclusive: Int64, amountTaxInclusive: Int64, netAmountTaxExclusive: Int64, taxAmount: Int64,
        taxCountry: String, restatement: Bool? = nil, erroneouslySubmitted: Bool? = nil
    ) {
        self.lineItemId = lineItemId
        self.kind = kind
        self.referenceLineItemId = referenceLineItemId
        self.creationDate = creationDate
        self.productIdentifier = productIdentifier
        self.quantity = quantity
        self.subscriptionEvent = subscriptionEvent
        self.subscriptionStartDate = subscriptionStartDate
        self.subscriptionEndDate = subscriptionEndDate
        self.subscriptionDaysOfPaidService = subscriptionDaysOfPaidService
        self.pricingCurrency = pricingCurrency
        self.reportingCurrency = reportingCurrency
        self.exchangeRate = exchangeRate
        self.amountTaxExclusive = amountTaxExclusive
        self.amountTaxInclusive = amountTaxInclusive
        self.netAmountTaxExclusive = netAmountTaxExclusive
        self.taxAmount = taxAmount
        self.taxCountry = taxCountry
        self.restatement = restatement
        self.erroneouslySubmitted = erroneouslySubmitted
    }

    /// Apple's `eventType`: BUY or REFUND.
    public var eventType: String { kind.eventType }
    /// Apple's `productType`: ONE_TIME_BUY, SUBSCRIPTION, or nil for a refund.
    public var productType: String? { kind.productType }

    /// Whether this line withdraws the one stored under its id (`restatement` and `erroneouslySubmitted`).
    public var isWithdrawal: Bool { restatement == true && erroneouslySubmitted == true }

    /// The line as canonical JSON (UTF-8): Apple's field names in the order of Apple's documentation, only
    /// the fields present, no whitespace. The same line always gives the same bytes, so the store can keep
    /// this text and compare it.
    public var json: [UInt8] { Array(jsonText.utf8) }

    var jsonText: String {
        var out = JSONObjectWriter()
        out.string("lineItemId", lineItemId)
        out.string("referenceLineItemId", referenceLineItemId)
        out.integer("creationDate", creationDate)
        out.string("eventType", eventType)
        out.string("productType", productType)
        out.string("productIdentifier", productIdentifier)
        out.integer("quantity", quantity)
        out.string("subscriptionEvent", subscriptionEvent?.rawValue)
        out.integer("subscriptionStartDate", subscriptionStartDate)
        out.integer("subscriptionEndDate", subscriptionEndDate)
        out.integer("subscriptionDaysOfPaidService", subscriptionDaysOfPaidService)
        out.string("pricingCurrency", pricingCurrency)
        out.string("reportingCurrency", reportingCurrency)
        out.number("exchangeRate", exchangeRate)
        out.integer("amountTaxExclusive", amountTaxExclusive)
        out.integer("amountTaxInclusive", amountTaxInclusive)
        out.integer("netAmountTaxExclusive", netAmountTaxExclusive)
        out.integer("taxAmount", taxAmount)
        out.string("taxCountry", taxCountry)
        out.bool("restatement", restatement)
        out.bool("erroneouslySubmitted", erroneouslySubmitted)
        return out.text
    }

    /// Reads a line back from JSON such as `json` wrote: shapes and kinds only (field types, required and
    /// allowed fields), not the business rules, which were checked when the line was accepted.
    public init(json: [UInt8]) throws(LineItemError) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(json)
        } catch {
            throw LineItemError(problems: [LineItemProblem(field: "", message: "\(error)")])
        }
        var problems: [LineItemProblem] = []
        guard let item = LineItemReader.read(value, field: "", problems: &problems), problems.isEmpty else {
            throw LineItemError(problems: problems)
        }
        self = item
    }
}
