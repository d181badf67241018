// SwiftPM links every executable with `--defsym main=<module>_main` (so tests can call an executable's
// entry point), and -parse-as-library emits no such symbol: each target defines it (`@_cdecl`) and hands
// over here to libFuzzer's driver, which is what libFuzzer's own main() does. See fuzz/README.md.

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// Runs libFuzzer on `callback` with the process's arguments.
public func runLibFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt {
    var argc = argc
    var argv = argv
    return runFuzzerDriver(&argc, &argv, callback)
}
