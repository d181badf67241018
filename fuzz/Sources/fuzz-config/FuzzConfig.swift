// libFuzzer target: a config file's bytes. A config that loads must give a gateway that builds, and
// every destination it holds must pass DestinationURLRules (those bytes go into Location headers).
import FuzzDriver
import LinkOutCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard case .success(let config) = ConfigLoader.load(json: bytes, baseDirectory: "/etc/linkout") else {
        return 0
    }
    if config.apps.isEmpty { fatalError("fuzz-config: a config loaded with no apps") }
    if config.links.isEmpty { fatalError("fuzz-config: a config loaded with no links") }
    for link in config.links {
        if link.destinations.isEmpty { fatalError("fuzz-config: link '\(link.id)' loaded with no destinations") }
        if let rule = LinkPathRules.problem(with: link.path) {
            fatalError("fuzz-config: link '\(link.id)' loaded with a path that breaks its rule: \(rule)")
        }
        for destination in link.destinations {
            if let rule = DestinationURLRules.problem(with: destination.url) {
                fatalError("fuzz-config: link '\(link.id)' loaded with a destination that breaks its rule: \(rule)")
            }
            if !(destination.weight > 0) || !destination.weight.isFinite {
                fatalError("fuzz-config: link '\(link.id)' loaded with weight \(destination.weight)")
            }
        }
    }
    let gateway = Gateway(config: config)
    // Exercise the built gateway once per link: a request with no token must be decided without a crash.
    for link in config.links {
        _ = gateway.decide(method: .get, target: Array(link.path.utf8), nowMs: 1_706_169_600_000)
    }
    return 0
}

// The entry point SwiftPM's link line names; libFuzzer's driver takes over from there (FuzzDriver).
@_cdecl("fuzz_config_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}
