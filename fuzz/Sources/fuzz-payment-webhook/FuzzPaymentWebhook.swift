// libFuzzer target: a payment provider's webhook as the shoppers' listener takes it on its configured path.
// The first byte chooses the provider (even: Stripe, odd: Paddle); the rest is the body as posted. Checked,
// beyond "does not crash":
//
// - the signature, over exactly the bytes received: a header the provider would send for this body verifies
//   with the secret among others (a rotation), at the edges of the tolerance; one byte more in the body, a
//   timestamp one second past the tolerance, or another secret alone does not;
// - the event read from the body (`StripeEvent.read`, `PaddleEvent.read`) is the same read twice, names an
//   event id and type, and is the provider's;
// - a sale's line (`ProviderLines.sale`, with a country and a default product) has tax-exclusive plus tax
//   equal to tax-inclusive, its id and date from the event, and its canonical JSON (what the store keeps)
//   reads back as the line; a refund of a line bought in its currency (`ProviderLines.refund`) likewise, and
//   refunds no more tax than the line it undoes carried.
import FuzzDriver
import LinkOutCore

private let secret = "whsec_fuzz-target-secret"
private let otherSecret = "whsec_another-one"
private let tolerance: Int64 = 300

private func check(_ condition: Bool, _ rule: @autoclosure () -> String, _ bytes: [UInt8]) {
    if !condition {
        fatalError("fuzz-payment-webhook: \(rule()) — input \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)")
    }
}

private func checkSignature(_ body: [UInt8], provider: PaymentProvider, input: [UInt8]) {
    let timestamp: Int64 = 1_767_225_600
    let header = ProviderSignature.header(body: body, timestamp: timestamp, secrets: [secret], provider: provider)
    func verify(_ header: String?, _ body: [UInt8], _ secrets: [String], now: Int64) -> Result<Int64, ProviderSignature.Problem> {
        ProviderSignature.verify(header: header, body: body, secrets: secrets, provider: provider, now: now, toleranceSeconds: tolerance)
    }
    check(verify(header, body, [otherSecret, secret], now: timestamp + tolerance) == .success(timestamp), "a signed body refused", input)
    check(verify(header, body, [secret], now: timestamp - tolerance) == .success(timestamp), "a signed body refused at -tolerance", input)
    check(verify(header, body + [0x20], [secret], now: timestamp) == .failure(.mismatch), "a body changed after signing taken", input)
    check(verify(header, body, [otherSecret], now: timestamp) == .failure(.mismatch), "a body signed by another secret taken", input)
    check(verify(header, body, [secret], now: timestamp + tolerance + 1) == .failure(.stale), "a stale signature taken", input)
    check(verify(nil, body, [secret], now: timestamp) == .failure(.missing), "no header taken", input)
    // The body's own bytes as a header: parsed without a crash, and never taken for this body's signature
    // unless it carries the very HMAC.
    let asHeader = String(decoding: body.prefix(512), as: UTF8.self)
    if case .success = verify(asHeader, body, [secret], now: timestamp) {
        check(asHeader.contains(ProviderSignature.signature(body: body, timestamp: timestamp, secret: secret, provider: provider)),
              "a header without the signature verified", input)
    }
}

/// Canonical JSON reads back as the line, as the store keeps it.
private func checkLine(_ line: LineItem, _ input: [UInt8]) {
    check(line.amountTaxExclusive + line.taxAmount == line.amountTaxInclusive, "exclusive + tax != inclusive in \(line.lineItemId)", input)
    check((try? LineItem(json: line.json)) == line, "a line's canonical JSON does not read back: \(String(decoding: line.json, as: UTF8.self))", input)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = input.first else { return 0 }
    let provider: PaymentProvider = first & 1 == 0 ? .stripe : .paddle
    let body = Array(input.dropFirst())
    checkSignature(body, provider: provider, input: input)

    let read = provider == .stripe ? StripeEvent.read(body) : PaddleEvent.read(body)
    let again = provider == .stripe ? StripeEvent.read(body) : PaddleEvent.read(body)
    check(read == again, "read twice, two events", input)
    guard case .success(let event) = read else { return 0 }
    check(event.provider == provider, "a \(provider) body read as \(event.provider)", input)
    check(!event.eventId.isEmpty && !event.type.isEmpty, "an event without id or type", input)
    switch event.effect {
    case .sale(let sale):
        guard case .line(let line) = ProviderLines.sale(sale, country: sale.countryAlpha2 ?? "NL", defaultProductIdentifier: "fuzz.product", start: nil) else {
            return 0
        }
        check(line.lineItemId == sale.lineItemId && line.creationDate == sale.creationDate, "the line is not the sale's", input)
        check(line.amountTaxInclusive == sale.amountTaxInclusive, "the line's total is not the sale's", input)
        checkLine(line, input)
    case .refund(let refund):
        // A line bought in the refund's currency for at least what is refunded, with a fifth of it tax.
        let total = max(refund.amountTaxInclusive, 1_000)
        let tax = total / 5
        let bought = LineItem(
            lineItemId: "bought", kind: .oneTimeBuy, creationDate: refund.creationDate, productIdentifier: "fuzz.product", quantity: 1,
            pricingCurrency: refund.currency, reportingCurrency: refund.currency, amountTaxExclusive: total - tax,
            amountTaxInclusive: total, netAmountTaxExclusive: total - tax, taxAmount: tax, taxCountry: "NLD")
        guard case .line(let line) = ProviderLines.refund(refund, of: bought) else { return 0 }
        check(line.lineItemId == refund.lineItemId, "the refund's line is not the refund's", input)
        check(abs(line.taxAmount) <= abs(bought.taxAmount) || refund.taxAmount != nil, "a prorated refund of more tax than the line carried", input)
        checkLine(line, input)
    case .ignore, .bind, .address, .review:
        break
    }
    return 0
}

@_cdecl("fuzz_payment_webhook_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}
