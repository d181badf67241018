import LinkOutTestSupport
import Testing

@testable import LinkOutCore

@Suite("TokenValidator")
struct TokenValidatorTests {
    typealias F = Fixtures

    let validator = TokenValidator(
        policy: F.policy,
        apps: [
            AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890),
            AllowedApp(bundleId: "com.other", appAppleId: 42),
        ])
    /// Ten seconds after the fixture token was made.
    let now = AppleSampleToken.creationDate + 10_000

    private func validate(
        _ token: ExternalPurchaseToken, bundleId: String = AppleSampleToken.bundleId, now: Int64? = nil
    )
        -> Result<TokenValidator.Accepted, TokenRejection>
    {
        validator.validate(token, bundleIdParameter: bundleId, nowMs: now ?? self.now)
    }

    @Test("a fresh, allow-listed token is accepted and not stale")
    func accepted() {
        #expect(validate(TokenBuilder.token()) == .success(TokenValidator.Accepted(token: TokenBuilder.token(), stale: false)))
        let other = TokenBuilder.token(appAppleId: 42, bundleId: "com.other")
        #expect(validate(other, bundleId: "com.other") == .success(TokenValidator.Accepted(token: other, stale: false)))
    }

    @Test("the bundleId parameter must equal the token's", arguments: ["com.other", "", "com.example ", "COM.EXAMPLE", "com.exampl"])
    func bundleIdMismatch(_ parameter: String) {
        #expect(validate(TokenBuilder.token(), bundleId: parameter) == .failure(TokenRejection(.bundleIdMismatch, field: .bundleId)))
    }

    @Test("a bundle ID outside the allow-list is refused, even when the parameter agrees")
    func unknownApp() {
        let token = TokenBuilder.token(bundleId: "com.unknown")
        #expect(validate(token, bundleId: "com.unknown") == .failure(TokenRejection(.unknownApp, field: .bundleId)))
        let caseVariant = TokenBuilder.token(bundleId: "com.Example")
        #expect(validate(caseVariant, bundleId: "com.Example") == .failure(TokenRejection(.unknownApp, field: .bundleId)))
    }

    @Test("the appAppleId must be the one configured for the bundle", arguments: [Int64(42), 0, -1_234_567_890, 1_234_567_891, Int64.max])
    func appAppleIdMismatch(_ appAppleId: Int64) {
        #expect(validate(TokenBuilder.token(appAppleId: appAppleId)) == .failure(TokenRejection(.appAppleIdMismatch, field: .appAppleId)))
    }

    @Test("with an empty allow-list every token is unknown")
    func emptyAllowList() {
        let validator = TokenValidator(policy: F.policy, apps: [])
        #expect(
            validator.validate(TokenBuilder.token(), bundleIdParameter: AppleSampleToken.bundleId, nowMs: now)
                == .failure(TokenRejection(.unknownApp, field: .bundleId)))
    }

    @Test("a bundle listed twice keeps its first appAppleId")
    func duplicateAppKeepsFirst() {
        let validator = TokenValidator(
            policy: F.policy,
            apps: [
                AllowedApp(bundleId: "com.example", appAppleId: 1_234_567_890),
                AllowedApp(bundleId: "com.example", appAppleId: 7),
            ])
        #expect(validator.validate(TokenBuilder.token(), bundleIdParameter: AppleSampleToken.bundleId, nowMs: now).isSuccess)
        #expect(
            validator.validate(TokenBuilder.token(appAppleId: 7), bundleIdParameter: AppleSampleToken.bundleId, nowMs: now)
                == .failure(TokenRejection(.appAppleIdMismatch, field: .appAppleId)))
    }

    @Test("checks run in order: bundle parameter, allow-list, app id, dates")
    func checkOrder() {
        let everythingWrong = TokenBuilder.token(
            appAppleId: 1, bundleId: "com.unknown", created: now + 10_000_000, type: .services, expiration: now - 1)
        #expect(validate(everythingWrong) == .failure(TokenRejection(.bundleIdMismatch, field: .bundleId)))
        #expect(validate(everythingWrong, bundleId: "com.unknown") == .failure(TokenRejection(.unknownApp, field: .bundleId)))
        let knownApp = TokenBuilder.token(appAppleId: 1, created: now + 10_000_000, type: .services, expiration: now - 1)
        #expect(validate(knownApp) == .failure(TokenRejection(.appAppleIdMismatch, field: .appAppleId)))
        let rightApp = TokenBuilder.token(created: now + 10_000_000, type: .services, expiration: now - 1)
        #expect(validate(rightApp) == .failure(TokenRejection(.createdInFuture, field: .tokenCreationDate)))
    }

    @Test("created just beyond the allowed skew is refused; exactly at the skew is accepted")
    func createdInFuture() {
        let skew = F.policy.maxFutureSkewMs
        #expect(
            validate(TokenBuilder.token(created: now + skew + 1)) == .failure(TokenRejection(.createdInFuture, field: .tokenCreationDate)))
        #expect(
            validate(TokenBuilder.token(created: now + 86_400_000)) == .failure(TokenRejection(.createdInFuture, field: .tokenCreationDate))
        )
        #expect(validate(TokenBuilder.token(created: Int64.max)) == .failure(TokenRejection(.createdInFuture, field: .tokenCreationDate)))
        #expect(
            validate(TokenBuilder.token(created: now + skew))
                == .success(TokenValidator.Accepted(token: TokenBuilder.token(created: now + skew), stale: false)))
        #expect(validate(TokenBuilder.token(created: now + 1)).isSuccess)
        #expect(validate(TokenBuilder.token(created: now)).isSuccess)
    }

    @Test("with zero skew, one millisecond ahead is refused")
    func zeroSkew() {
        let validator = TokenValidator(
            policy: TokenPolicy(maxLength: 4096, maxFutureSkewMs: 0, staleAfterMs: 3_600_000),
            apps: [AllowedApp(bundleId: AppleSampleToken.bundleId, appAppleId: AppleSampleToken.appAppleId)])
        #expect(
            validator.validate(TokenBuilder.token(created: now + 1), bundleIdParameter: AppleSampleToken.bundleId, nowMs: now)
                == .failure(TokenRejection(.createdInFuture, field: .tokenCreationDate)))
        #expect(validator.validate(TokenBuilder.token(created: now), bundleIdParameter: AppleSampleToken.bundleId, nowMs: now).isSuccess)
    }

    @Test("an expiry at or before now is refused; a future expiry is accepted")
    func expired() {
        for type in TokenType.known + [TokenType(rawValue: "BRAND_NEW_KIND")!] {
            #expect(
                validate(TokenBuilder.token(type: type, expiration: now)) == .failure(TokenRejection(.expired, field: .tokenExpirationDate))
            )
            #expect(
                validate(TokenBuilder.token(type: type, expiration: now - 1))
                    == .failure(TokenRejection(.expired, field: .tokenExpirationDate)))
            #expect(
                validate(TokenBuilder.token(type: type, expiration: AppleSampleToken.creationDate))
                    == .failure(TokenRejection(.expired, field: .tokenExpirationDate)))
            let live = TokenBuilder.token(type: type, expiration: now + 1)
            #expect(validate(live) == .success(TokenValidator.Accepted(token: live, stale: false)))
        }
    }

    @Test("link-out tokens have no expiry and are never 'expired'")
    func linkOutNeverExpires() {
        let token = TokenBuilder.token()
        #expect(
            validate(token, now: AppleSampleToken.creationDate + 365 * 86_400_000)
                == .success(TokenValidator.Accepted(token: token, stale: true)))
    }

    @Test("a token older than staleAfterMs is accepted but flagged stale")
    func stale() {
        let staleAfter = F.policy.staleAfterMs
        let token = TokenBuilder.token()
        #expect(
            validate(token, now: AppleSampleToken.creationDate + staleAfter)
                == .success(TokenValidator.Accepted(token: token, stale: false)))
        #expect(
            validate(token, now: AppleSampleToken.creationDate + staleAfter + 1)
                == .success(TokenValidator.Accepted(token: token, stale: true)))
        #expect(validate(token, now: AppleSampleToken.creationDate + 1) == .success(TokenValidator.Accepted(token: token, stale: false)))
        // Within the future skew: not stale either.
        #expect(validate(token, now: AppleSampleToken.creationDate - 1000) == .success(TokenValidator.Accepted(token: token, stale: false)))
        // Created at the epoch, seen today.
        let ancient = TokenBuilder.token(created: 0)
        #expect(validate(ancient) == .success(TokenValidator.Accepted(token: ancient, stale: true)))
    }

    @Test("an expired custom-link token is refused even if it would also be stale")
    func expiredBeatsStale() {
        let token = TokenBuilder.token(type: .acquisition, expiration: AppleSampleToken.creationDate + 1000)
        #expect(
            validate(token, now: AppleSampleToken.creationDate + F.policy.staleAfterMs * 2)
                == .failure(TokenRejection(.expired, field: .tokenExpirationDate)))
    }

    @Test("an absurdly old creation date is stale, not fresh (no wrap-around)")
    func absurdlyOldIsStale() {
        // nowMs - tokenCreationDate overflows Int64 here: an overflowing age counts as stale.
        let token = TokenBuilder.token(created: Int64.min)
        #expect(validate(token) == .success(TokenValidator.Accepted(token: token, stale: true)))
        let veryOld = TokenBuilder.token(created: Int64.min + 1_000_000_000_000)
        #expect(validate(veryOld) == .success(TokenValidator.Accepted(token: veryOld, stale: true)))
    }
}
