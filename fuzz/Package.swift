// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for every part of the core that reads bytes from outside: the token decoder, the query
// scanner (through the whole Gateway.decide), the config loader, the request head parser, JSONReader (with
// Foundation's JSONSerialization as a second opinion), the checkout's line-item body, an app backend's
// token registration, the payment providers' webhooks and Apple's notification body. Kept out of the main
// package so the product's build and tests never compile them; built and run by fuzz/run (see
// fuzz/README.md), every target the same way:
//   swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//
// A new body linkout takes gets a target here too: a folder under Sources/ with its `fuzz_<name>_main`,
// a `corpus/<name>/` of seeds, and its name in fuzz/run.
let package = Package(
    name: "linkout-fuzz",
    dependencies: [
        .package(name: "linkout", path: ".."),
        // The same packages linkout depends on (one version is resolved for both): fuzz-notification signs
        // with swift-crypto and builds its reference chain with swift-certificates.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
    ],
    targets: [
        // The hand-over to libFuzzer's driver every target needs.
        .target(name: "FuzzDriver"),
        .executableTarget(name: "fuzz-token", dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]),
        .executableTarget(name: "fuzz-query", dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]),
        .executableTarget(name: "fuzz-config", dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]),
        .executableTarget(name: "fuzz-head", dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]),
        .executableTarget(name: "fuzz-json", dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]),
        .executableTarget(name: "fuzz-line-items", dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]),
        .executableTarget(name: "fuzz-token-registration", dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]),
        .executableTarget(name: "fuzz-payment-webhook", dependencies: ["FuzzDriver", .product(name: "LinkOutCore", package: "linkout")]),
        .executableTarget(
            name: "fuzz-notification",
            dependencies: [
                "FuzzDriver",
                .product(name: "LinkOutCore", package: "linkout"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
    ]
)
