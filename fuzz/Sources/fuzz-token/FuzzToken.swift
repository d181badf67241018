// libFuzzer target: the `externalPurchaseToken` value after percent-decoding, as the decoder gets it.
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

// SwiftPM links every executable with `--defsym main=fuzz_token_main` (so tests can call an executable's
// entry point), and -parse-as-library emits no such symbol. This is it: it hands over to libFuzzer's
// driver, which is what libFuzzer's own main() does.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@_cdecl("fuzz_token_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return runFuzzerDriver(&argc, &argv, fuzz)
}
