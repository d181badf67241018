/// Apple's documented link-out sample token, exactly as printed in its StoreKit documentation, and what it
/// holds. The shipped config's app (`com.example`, 1234567890) is this token's, so it is accepted as is.
package enum AppleSampleToken {
    package static let text =
        "ewoJImFwcEFwcGxlSWQiOjEyMzQ1Njc4OTAsCgkiYnVuZGxlSWQiOiJjb20uZXhhbXBsZSIsCgkidG9rZW5DcmVhdGlvbkRhdGUiOjE3MDYxNjk2MDAwMDAsCgkiZXh0ZXJuYWxQdXJjaGFzZUlkIjoiMDAwMDAwMDAtMDAwMC0wMDAwLTAwMDAtMDAwMDAwMDAwMDAwIgp9"

    /// What it decodes to, byte for byte (tabs and newlines included).
    package static let json =
        "{\n\t\"appAppleId\":1234567890,\n\t\"bundleId\":\"com.example\",\n\t\"tokenCreationDate\":1706169600000,\n\t\"externalPurchaseId\":\"00000000-0000-0000-0000-000000000000\"\n}"

    package static let bundleId = "com.example"
    package static let appAppleId: Int64 = 1_234_567_890
    package static let creationDate: Int64 = 1_706_169_600_000
    package static let externalPurchaseId = "00000000-0000-0000-0000-000000000000"
}
