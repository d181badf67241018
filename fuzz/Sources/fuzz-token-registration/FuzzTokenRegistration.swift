// libFuzzer target: a `POST /v1/tokens` body (and a line of `linkout tokens import`), as the API reads it:
// `TokenRegistration.parse`, then `TokenRegistration.judge` of every entry with a fixed validator and clock.
// Checked, beyond "does not crash":
//
// - a body refused whole names at least one problem;
// - a body taken has 1 to `maxBatch` entries, each with its path (`""` for one token, `tokens[i]` in order);
// - a verdict is the same when judged again (a retry adds nothing and loses nothing);
// - a refused entry names at least one problem, each under its own path;
// - an accepted entry is recorded as kind `registered` under link `registered`, never as a shopper, for the
//   bundle ID it was sent with, at the clock's time; and its token is the one the link path decodes from
//   the same text (`TokenDecoder`, one code path), with the same `externalPurchaseId`.
import FuzzDriver
import LinkOutCore

/// Ten seconds after Apple's sample token was made (2024-01-25T08:00:00Z), so the seeds' tokens are fresh.
private let now: Int64 = 1_706_169_610_000
private let validator = TokenValidator(
    policy: TokenPolicy(maxLength: 4096, maxFutureSkewMs: 300_000, staleAfterMs: 3_600_000),
    apps: [AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890), AllowedApp(bundleId: "com.other", appAppleId: 42)])

private func check(_ condition: Bool, _ rule: @autoclosure () -> String, _ bytes: [UInt8]) {
    if !condition {
        fatalError("fuzz-token-registration: \(rule()) — input \(String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let entries: [TokenRegistration.Entry]
    switch TokenRegistration.parse(bytes) {
    case .failure(let error):
        check(!error.problems.isEmpty, "a body refused without a problem", bytes)
        return 0
    case .success(let parsed):
        entries = parsed
    }
    check((1...TokenRegistration.maxBatch).contains(entries.count), "\(entries.count) entries taken", bytes)
    // A body of one token has one entry with no path; a batch's entries are named in order.
    let single = entries.count == 1 && entries[0].path.isEmpty
    for (index, entry) in entries.enumerated() where !single {
        check(entry.path == "tokens[\(index)]", "entry \(index) under path \(entry.path)", bytes)
    }
    for entry in entries {
        let verdict = TokenRegistration.judge(entry, validator: validator, maxLength: 4096, nowMs: now)
        check(TokenRegistration.judge(entry, validator: validator, maxLength: 4096, nowMs: now) == verdict, "judged twice, two verdicts", bytes)
        switch verdict {
        case .refused(let reason, let problems):
            check(!reason.isEmpty, "a refusal without a reason", bytes)
            check(!problems.isEmpty, "a refusal without a problem", bytes)
            for problem in problems {
                check(entry.path.isEmpty || problem.field.hasPrefix(entry.path), "a problem of \(entry.path) under \(problem.field)", bytes)
            }
        case .accepted(let record):
            check(entry.problems.isEmpty, "an entry with shape problems accepted", bytes)
            check(record.kind == .registered && record.link == TokenRegistration.registeredLink, "recorded as \(record.kind) on \(record.link)", bytes)
            check(record.seenAt == now, "recorded at \(record.seenAt)", bytes)
            check(record.token.bundleId == entry.bundleId, "recorded for \(record.token.bundleId), sent for \(entry.bundleId ?? "nil")", bytes)
            guard let text = entry.token, case .success(let decoded) = TokenDecoder.decode(Array(text.utf8), maxLength: 4096) else {
                check(false, "accepted a token the link path does not decode", bytes)
                return 0
            }
            check(decoded == record.token, "the token recorded is not the one the link path decodes", bytes)
            check(!record.token.externalPurchaseId.isEmpty, "an empty externalPurchaseId recorded", bytes)
        }
    }
    return 0
}

@_cdecl("fuzz_token_registration_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}
