// libFuzzer target: a `POST /v1/line-items` body (and a line of `linkout transactions import`), as the API
// reads it: `LineItemSubmission.parse` (JSONReader, LineItemReader, LineItemRules) at a fixed clock, then,
// for what it takes, the cross-line rules and the report it makes. Checked, beyond "does not crash":
//
// - a refusal names at least one problem, and the API's error body (`{"errors": [...]}`, messages quoting
//   the input) is JSON that reads back as written;
// - a submission taken has 1 to 100 lines and a non-empty reference; each line's canonical JSON (what the
//   store keeps) reads back as the same line, and the submission written with those reads back the same;
// - against a store holding nothing, `LineItemHistoryRules` either names problems or accepts every line as
//   new; once those are stored, the same submission again is accepted with every line unchanged (the
//   README's "sending the same request twice is safe");
// - the LINE_ITEM report made of the stored lines is JSON carrying every line but withdrawals.
import FuzzDriver
import LinkOutCore

/// 2026-01-01T00:00:00Z: every date rule runs against this clock, so a finding reproduces.
private let now: Int64 = 1_767_225_600_000

private func check(_ condition: Bool, _ rule: @autoclosure () -> String, _ bytes: [UInt8]) {
    if !condition {
        fatalError("fuzz-line-items: \(rule()) — input \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)")
    }
}

/// The API's error body, as LineItemIntake.errorBody writes it.
private func errorBody(_ problems: [LineItemProblem]) -> JSONValue {
    .object([.init(key: "errors", value: .array(problems.map { problem in
        .object([.init(key: "field", value: .string(problem.field)), .init(key: "message", value: .string(problem.message))])
    }))])
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let submission: LineItemSubmission
    switch LineItemSubmission.parse(bytes, now: now) {
    case .failure(let error):
        check(!error.problems.isEmpty, "a refusal without a problem", bytes)
        let body = errorBody(error.problems)
        check((try? JSONValue.parse(Array(body.text.utf8))) == body, "the error body does not read back as written", bytes)
        return 0
    case .success(let parsed):
        submission = parsed
    }
    check((1...LineItemSubmission.maxLineItems).contains(submission.lineItems.count), "\(submission.lineItems.count) lines taken", bytes)
    let id: String
    let referenceMember: JSONValue.Member
    switch submission.reference {
    case .externalPurchaseId(let text): id = text; referenceMember = .init(key: "externalPurchaseId", value: .string(text))
    case .linkoutRef(let text): id = "ref-" + text; referenceMember = .init(key: "linkoutRef", value: .string(text))
    }
    check(!id.isEmpty, "an empty reference taken", bytes)
    for line in submission.lineItems {
        let again = try? LineItem(json: line.json)
        check(again == line, "a line's canonical JSON does not read back as the line: \(String(decoding: line.json, as: UTF8.self))", bytes)
    }
    var canonical: [JSONValue] = []
    for line in submission.lineItems {
        guard let value = try? JSONValue.parse(line.json) else { check(false, "a line's JSON is not JSON", bytes); return 0 }
        canonical.append(value)
    }
    let rewritten = JSONValue.object([referenceMember, .init(key: "lineItems", value: .array(canonical))])
    guard case .success(let reread) = LineItemSubmission.parse(Array(rewritten.text.utf8), now: now) else {
        check(false, "the submission written canonically is refused", bytes)
        return 0
    }
    check(reread == submission, "the submission written canonically reads differently", bytes)

    // The cross-line rules, for a token created an hour before the clock.
    let created = now - 3_600_000
    let first = LineItemHistoryRules.check(
        submission.lineItems, externalPurchaseId: id, stored: [], tokenCreationDate: created, tokenExpirationDate: nil, now: now)
    guard first.problems.isEmpty else { return 0 }
    check(first.accepted.count == submission.lineItems.count, "lines accepted without problems, but not all", bytes)
    check(first.accepted.allSatisfy { $0.disposition == .new }, "a line not new against an empty store", bytes)
    let stored = first.accepted.map { StoredLineItem(externalPurchaseId: id, lineItem: $0.lineItem) }
    let second = LineItemHistoryRules.check(
        submission.lineItems, externalPurchaseId: id, stored: stored, tokenCreationDate: created, tokenExpirationDate: nil, now: now)
    check(second.problems.isEmpty, "the same submission again is refused: \(second.problems.map(\.description))", bytes)
    check(second.accepted.allSatisfy { $0.disposition == .unchanged }, "the same submission again changes a line", bytes)

    let lines = first.accepted.map { ReportBody.Line(json: String(decoding: $0.lineItem.json, as: UTF8.self), acceptedBefore: false) }
    let report = ReportBody.make(requestIdentifier: "fuzz", externalPurchaseId: id, status: .lineItem, lines: lines)
    guard case .object(let members)? = try? JSONValue.parse(Array(report.utf8)),
          case .array(let reported)? = members.first(where: { $0.key == "lineItems" })?.value else {
        check(false, "the report is not a JSON object with lineItems: \(report.prefix(200))", bytes)
        return 0
    }
    let withdrawals = first.accepted.filter { $0.lineItem.isWithdrawal }.count
    check(reported.count == first.accepted.count - withdrawals, "the report carries \(reported.count) of \(first.accepted.count) lines", bytes)
    return 0
}

@_cdecl("fuzz_line_items_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}
