import LinkOutTestSupport
import Testing

@testable import LinkOutCore

/// The request path's validation compares bytes first and falls back to `String` comparison: it must
/// answer exactly as `validate` does, for the bytes a request sends and for spellings that are equal only
/// as Swift strings (U+212A KELVIN SIGN is canonically equivalent to "K").
@Suite("TokenValidator, bytes first")
struct TokenValidatorBytesTests {
    typealias F = Fixtures

    @Test("staleness(of:bundleIdParameter:) agrees with validate for same and equivalent spellings")
    func agrees() {
        let validator = TokenValidator(
            policy: F.policy,
            apps: [
                AllowedApp(bundleId: "com.K", appAppleId: 1), AllowedApp(bundleId: "com.\u{212A}", appAppleId: 2),
                AllowedApp(bundleId: "com.example", appAppleId: 3), AllowedApp(bundleId: "com.example", appAppleId: 4),
            ])
        let spellings = ["com.K", "com.\u{212A}", "com.k", "com.example", "com.exampl", "", "com.example "]
        for bundleId in spellings {
            for appAppleId: Int64 in [1, 2, 3, 4] {
                let token = TokenBuilder.token(appAppleId: appAppleId, bundleId: bundleId)
                for parameter in spellings {
                    let expected = validator.validate(token, bundleIdParameter: parameter, nowMs: AppleSampleToken.creationDate + 1_000)
                        .map(\.stale)
                    let byBytes = Array(parameter.utf8).withUnsafeBytes {
                        validator.staleness(of: token, bundleIdParameter: $0, nowMs: AppleSampleToken.creationDate + 1_000)
                    }
                    #expect(byBytes == expected, "\(bundleId) \(appAppleId) \(parameter)")
                }
            }
        }
    }
}
