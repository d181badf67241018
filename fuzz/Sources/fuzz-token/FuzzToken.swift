// libFuzzer target: the `externalPurchaseToken` value after percent-decoding, as the decoder gets it.
import FuzzDriver
import LinkOutCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // The base64 layer alone, through both entry points; they must agree.
    let decoded = TokenBase64.decode(bytes)
    let decodedRaw = bytes.withUnsafeBytes { TokenBase64.decode($0) }
    if decoded != decodedRaw {
        fatalError("fuzz-token: TokenBase64.decode disagrees between its two entry points")
    }
    if let decoded {
        // Re-encoding what was decoded and decoding again must give the same bytes.
        let again = TokenBase64.decode(Array(TokenBase64.encodeURLSafe(decoded).utf8))
        if again != decoded { fatalError("fuzz-token: URL-safe re-encoding does not round-trip") }
    }

    // The whole decoder, as the gateway calls it.
    switch TokenDecoder.decode(bytes, maxLength: 4096) {
    case .success(let token):
        if !ExternalPurchaseID.isValid(token.externalPurchaseId) {
            fatalError("fuzz-token: decoder accepted an invalid externalPurchaseId")
        }
        if bytes.count > 4096 { fatalError("fuzz-token: decoder accepted a token over maxLength") }
    case .failure:
        break
    }
    return 0
}

// The entry point SwiftPM's link line names; libFuzzer's driver takes over from there (FuzzDriver).
@_cdecl("fuzz_token_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}
